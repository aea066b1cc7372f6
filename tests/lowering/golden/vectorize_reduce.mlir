// before
builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %z = arith.constant {value = 0.0} : f32
    %row = wi.alloc : memref<64xf32, private>
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %v = wi.gload %p : (ptr<f32>) -> f32
      wi.store %v, %row, %s : f32, memref<64xf32, private>, i32
      scf.yield
    }
    %first = wi.load %row, %c0 : (memref<64xf32, private>, i32) -> f32
    %mx = scf.for %c1, %c64, %c1, %first : (i32, i32, i32, f32) -> f32 {
    ^bb0(%s2: i32, %acc: f32):
      %e = wi.load %row, %s2 : (memref<64xf32, private>, i32) -> f32
      %r = arith.max %acc, %e {propagate_nan = false} : f32
      scf.yield %r : f32
    }
    %sum = scf.for %c0, %c64, %c1, %z : (i32, i32, i32, f32) -> f32 {
    ^bb0(%s3: i32, %acc2: f32):
      %e2 = wi.load %row, %s3 : (memref<64xf32, private>, i32) -> f32
      %d = arith.sub %e2, %mx : f32
      %r2 = arith.add %acc2, %d : f32
      scf.yield %r2 : f32
    }
    wi.gstore %y, %sum : ptr<f32>, f32
    wi.return
  }
}
// after
builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %z = arith.constant {value = 0.0} : f32
    %row = wi.alloc : memref<64xf32, private>
    %0 = arith.constant {value = 64} : i32
    %1 = arith.constant {value = 16} : i32
    scf.for %c0, %0, %1 : i32, i32, i32 {
    ^bb0(%2: i32):
      %3 = wi.addptr %x, %2 : (ptr<f32>, i32) -> ptr<f32>
      %4 = wi.gvload %3 : (ptr<f32>) -> vector<16xf32>
      wi.vstore %4, %row, %2 : vector<16xf32>, memref<64xf32, private>, i32
      scf.yield
    }
    %first = wi.load %row, %c0 : (memref<64xf32, private>, i32) -> f32
    %5 = arith.constant {value = 49} : i32
    %6 = wi.broadcast %first : (f32) -> vector<16xf32>
    %7 = arith.constant {value = 16} : i32
    %8 = scf.for %c1, %5, %7, %6 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
    ^bb0(%9: i32, %10: vector<16xf32>):
      %11 = wi.vload %row, %9 : (memref<64xf32, private>, i32) -> vector<16xf32>
      %12 = arith.max %10, %11 {propagate_nan = false} : vector<16xf32>
      scf.yield %12 : vector<16xf32>
    }
    %13 = scf.for %5, %c64, %7, %8 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
    ^bb0(%14: i32, %15: vector<16xf32>):
      %16 = arith.sub %c64, %14 : i32
      %17 = wi.vload %row, %14, %16 : (memref<64xf32, private>, i32, i32) -> vector<16xf32>
      %18 = arith.max %15, %17 {propagate_nan = false} : vector<16xf32>
      %19 = wi.lane_ids : vector<16xi32>
      %20 = wi.broadcast %16 : (i32) -> vector<16xi32>
      %21 = arith.cmp %19, %20 {predicate = "lt"} : (vector<16xi32>, vector<16xi32>) -> vector<16xi1>
      %22 = arith.select %21, %18, %15 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      scf.yield %22 : vector<16xf32>
    }
    %23 = wi.vreduce %13 {kind = "max", propagate_nan = false} : (vector<16xf32>) -> f32
    %24 = wi.broadcast %23 : (f32) -> vector<16xf32>
    %25 = arith.constant {value = 64} : i32
    %26 = arith.constant {value = -0.0} : f32
    %27 = wi.broadcast %26 : (f32) -> vector<16xf32>
    %28 = arith.constant {value = 16} : i32
    %29 = scf.for %c0, %25, %28, %27 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
    ^bb0(%30: i32, %31: vector<16xf32>):
      %32 = wi.vload %row, %30 : (memref<64xf32, private>, i32) -> vector<16xf32>
      %33 = arith.sub %32, %24 : vector<16xf32>
      %34 = arith.add %31, %33 : vector<16xf32>
      scf.yield %34 : vector<16xf32>
    }
    %35 = wi.vreduce %29 {kind = "add"} : (vector<16xf32>) -> f32
    %36 = arith.add %z, %35 : f32
    wi.gstore %y, %36 : ptr<f32>, f32
    wi.return
  }
}
