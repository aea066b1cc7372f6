// before
builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %ninf = arith.constant {value = -inf} : f32
    %z = arith.constant {value = 0.0} : f32
    %row = wi.alloc : memref<64xf32, private>
    %sum = scf.for %c0, %c64, %c1, %z : (i32, i32, i32, f32) -> f32 {
    ^bb0(%s: i32, %acc: f32):
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %m = arith.cmp %s, %n {predicate = "lt"} : (i32, i32) -> i1
      %v = wi.gload %p, %m, %ninf : (ptr<f32>, i1, f32) -> f32
      %e = math.exp %v : f32
      wi.store %e, %row, %s : f32, memref<64xf32, private>, i32
      %r = arith.add %acc, %e : f32
      scf.yield %r : f32
    }
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%t: i32):
      %p2 = wi.addptr %x, %t : (ptr<f32>, i32) -> ptr<f32>
      %m2 = arith.cmp %t, %n {predicate = "lt"} : (i32, i32) -> i1
      %v2 = wi.gload %p2, %m2, %sum : (ptr<f32>, i1, f32) -> f32
      %q2 = wi.addptr %y, %t : (ptr<f32>, i32) -> ptr<f32>
      %m3 = arith.cmp %t, %n {predicate = "le"} : (i32, i32) -> i1
      wi.gstore %q2, %v2, %m3 : ptr<f32>, f32, i1
      scf.yield
    }
    wi.return
  }
}
// after
builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %ninf = arith.constant {value = -inf} : f32
    %z = arith.constant {value = 0.0} : f32
    %row = wi.alloc : memref<64xf32, private>
    %0 = arith.min %c64, %n : i32
    %1 = arith.max %0, %c0 : i32
    %2 = arith.constant {value = 16} : i32
    %3 = arith.div %1, %2 : i32
    %4 = arith.mul %3, %2 : i32
    %5 = arith.constant {value = -0.0} : f32
    %6 = wi.broadcast %5 : (f32) -> vector<16xf32>
    %7 = scf.for %c0, %4, %2, %6 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
    ^bb0(%8: i32, %9: vector<16xf32>):
      %10 = wi.addptr %x, %8 : (ptr<f32>, i32) -> ptr<f32>
      %11 = wi.gvload %10 : (ptr<f32>) -> vector<16xf32>
      %12 = math.exp %11 : vector<16xf32>
      wi.vstore %12, %row, %8 : vector<16xf32>, memref<64xf32, private>, i32
      %13 = arith.add %9, %12 : vector<16xf32>
      scf.yield %13 : vector<16xf32>
    }
    %14 = scf.for %4, %1, %2, %7 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
    ^bb0(%15: i32, %16: vector<16xf32>):
      %17 = arith.sub %1, %15 : i32
      %18 = wi.addptr %x, %15 : (ptr<f32>, i32) -> ptr<f32>
      %19 = wi.gvload %18, %17 : (ptr<f32>, i32) -> vector<16xf32>
      %20 = math.exp %19 : vector<16xf32>
      wi.vstore %20, %row, %15, %17 : vector<16xf32>, memref<64xf32, private>, i32, i32
      %21 = arith.add %16, %20 : vector<16xf32>
      %22 = wi.lane_ids : vector<16xi32>
      %23 = wi.broadcast %17 : (i32) -> vector<16xi32>
      %24 = arith.cmp %22, %23 {predicate = "lt"} : (vector<16xi32>, vector<16xi32>) -> vector<16xi1>
      %25 = arith.select %24, %21, %16 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      scf.yield %25 : vector<16xf32>
    }
    %26 = wi.vreduce %14 {kind = "add"} : (vector<16xf32>) -> f32
    %27 = arith.add %z, %26 : f32
    %28 = wi.broadcast %ninf : (f32) -> vector<16xf32>
    %29 = arith.max %c64, %1 : i32
    %30 = arith.sub %29, %1 : i32
    %31 = arith.constant {value = 16} : i32
    %32 = arith.div %30, %31 : i32
    %33 = arith.mul %32, %31 : i32
    %34 = arith.add %1, %33 : i32
    %35 = arith.constant {value = -0.0} : f32
    %36 = wi.broadcast %35 : (f32) -> vector<16xf32>
    %37 = scf.for %1, %34, %31, %36 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
    ^bb0(%38: i32, %39: vector<16xf32>):
      %40 = math.exp %28 : vector<16xf32>
      wi.vstore %40, %row, %38 : vector<16xf32>, memref<64xf32, private>, i32
      %41 = arith.add %39, %40 : vector<16xf32>
      scf.yield %41 : vector<16xf32>
    }
    %42 = scf.for %34, %29, %31, %37 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
    ^bb0(%43: i32, %44: vector<16xf32>):
      %45 = arith.sub %29, %43 : i32
      %46 = math.exp %28 : vector<16xf32>
      wi.vstore %46, %row, %43, %45 : vector<16xf32>, memref<64xf32, private>, i32, i32
      %47 = arith.add %44, %46 : vector<16xf32>
      %48 = wi.lane_ids : vector<16xi32>
      %49 = wi.broadcast %45 : (i32) -> vector<16xi32>
      %50 = arith.cmp %48, %49 {predicate = "lt"} : (vector<16xi32>, vector<16xi32>) -> vector<16xi1>
      %51 = arith.select %50, %47, %44 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      scf.yield %51 : vector<16xf32>
    }
    %52 = wi.vreduce %42 {kind = "add"} : (vector<16xf32>) -> f32
    %53 = arith.add %27, %52 : f32
    %54 = arith.min %c64, %n : i32
    %55 = arith.constant {value = 1} : i32
    %56 = arith.add %n, %55 : i32
    %57 = arith.min %54, %56 : i32
    %58 = arith.max %57, %c0 : i32
    %59 = arith.constant {value = 16} : i32
    %60 = arith.div %58, %59 : i32
    %61 = arith.mul %60, %59 : i32
    %62 = arith.max %n, %56 : i32
    %63 = arith.min %c64, %62 : i32
    %64 = arith.max %58, %63 : i32
    scf.for %c0, %61, %59 : i32, i32, i32 {
    ^bb0(%65: i32):
      %66 = wi.addptr %x, %65 : (ptr<f32>, i32) -> ptr<f32>
      %67 = wi.gvload %66 : (ptr<f32>) -> vector<16xf32>
      %68 = wi.addptr %y, %65 : (ptr<f32>, i32) -> ptr<f32>
      wi.gvstore %68, %67 : ptr<f32>, vector<16xf32>
      scf.yield
    }
    scf.for %61, %58, %59 : i32, i32, i32 {
    ^bb0(%69: i32):
      %70 = arith.sub %58, %69 : i32
      %71 = wi.addptr %x, %69 : (ptr<f32>, i32) -> ptr<f32>
      %72 = wi.gvload %71, %70 : (ptr<f32>, i32) -> vector<16xf32>
      %73 = wi.addptr %y, %69 : (ptr<f32>, i32) -> ptr<f32>
      wi.gvstore %73, %72, %70 : ptr<f32>, vector<16xf32>, i32
      scf.yield
    }
    scf.for %58, %64, %c1 : i32, i32, i32 {
    ^bb0(%t: i32):
      %p2 = wi.addptr %x, %t : (ptr<f32>, i32) -> ptr<f32>
      %m2 = arith.cmp %t, %n {predicate = "lt"} : (i32, i32) -> i1
      %v2 = wi.gload %p2, %m2, %53 : (ptr<f32>, i1, f32) -> f32
      %q2 = wi.addptr %y, %t : (ptr<f32>, i32) -> ptr<f32>
      %m3 = arith.cmp %t, %n {predicate = "le"} : (i32, i32) -> i1
      wi.gstore %q2, %v2, %m3 : ptr<f32>, f32, i1
      scf.yield
    }
    wi.return
  }
}
