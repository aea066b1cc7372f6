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
    %14 = wi.vreduce %7 {kind = "add"} : (vector<16xf32>) -> f32
    %15 = arith.add %z, %14 : f32
    %sum = scf.for %4, %1, %c1, %15 : (i32, i32, i32, f32) -> f32 {
    ^bb0(%s: i32, %acc: f32):
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %m = arith.cmp %s, %n {predicate = "lt"} : (i32, i32) -> i1
      %v = wi.gload %p, %m, %ninf : (ptr<f32>, i1, f32) -> f32
      %e = math.exp %v : f32
      wi.store %e, %row, %s : f32, memref<64xf32, private>, i32
      %r = arith.add %acc, %e : f32
      scf.yield %r : f32
    }
    %16 = wi.broadcast %ninf : (f32) -> vector<16xf32>
    %17 = arith.max %c64, %1 : i32
    %18 = arith.sub %17, %1 : i32
    %19 = arith.constant {value = 16} : i32
    %20 = arith.div %18, %19 : i32
    %21 = arith.mul %20, %19 : i32
    %22 = arith.add %1, %21 : i32
    %23 = arith.constant {value = -0.0} : f32
    %24 = wi.broadcast %23 : (f32) -> vector<16xf32>
    %25 = scf.for %1, %22, %19, %24 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
    ^bb0(%26: i32, %27: vector<16xf32>):
      %28 = math.exp %16 : vector<16xf32>
      wi.vstore %28, %row, %26 : vector<16xf32>, memref<64xf32, private>, i32
      %29 = arith.add %27, %28 : vector<16xf32>
      scf.yield %29 : vector<16xf32>
    }
    %30 = wi.vreduce %25 {kind = "add"} : (vector<16xf32>) -> f32
    %31 = arith.add %sum, %30 : f32
    %sum_1 = scf.for %22, %c64, %c1, %31 : (i32, i32, i32, f32) -> f32 {
    ^bb0(%s_1: i32, %acc_1: f32):
      %p_1 = wi.addptr %x, %s_1 : (ptr<f32>, i32) -> ptr<f32>
      %m_1 = arith.cmp %s_1, %n {predicate = "lt"} : (i32, i32) -> i1
      %v_1 = wi.gload %p_1, %m_1, %ninf : (ptr<f32>, i1, f32) -> f32
      %e_1 = math.exp %v_1 : f32
      wi.store %e_1, %row, %s_1 : f32, memref<64xf32, private>, i32
      %r_1 = arith.add %acc_1, %e_1 : f32
      scf.yield %r_1 : f32
    }
    %32 = arith.min %c64, %n : i32
    %33 = arith.constant {value = 1} : i32
    %34 = arith.add %n, %33 : i32
    %35 = arith.min %32, %34 : i32
    %36 = arith.max %35, %c0 : i32
    %37 = arith.constant {value = 16} : i32
    %38 = arith.div %36, %37 : i32
    %39 = arith.mul %38, %37 : i32
    %40 = arith.max %n, %34 : i32
    %41 = arith.min %c64, %40 : i32
    %42 = arith.max %36, %41 : i32
    scf.for %c0, %39, %37 : i32, i32, i32 {
    ^bb0(%43: i32):
      %44 = wi.addptr %x, %43 : (ptr<f32>, i32) -> ptr<f32>
      %45 = wi.gvload %44 : (ptr<f32>) -> vector<16xf32>
      %46 = wi.addptr %y, %43 : (ptr<f32>, i32) -> ptr<f32>
      wi.gvstore %46, %45 : ptr<f32>, vector<16xf32>
      scf.yield
    }
    scf.for %39, %42, %c1 : i32, i32, i32 {
    ^bb0(%t: i32):
      %p2 = wi.addptr %x, %t : (ptr<f32>, i32) -> ptr<f32>
      %m2 = arith.cmp %t, %n {predicate = "lt"} : (i32, i32) -> i1
      %v2 = wi.gload %p2, %m2, %sum_1 : (ptr<f32>, i1, f32) -> f32
      %q2 = wi.addptr %y, %t : (ptr<f32>, i32) -> ptr<f32>
      %m3 = arith.cmp %t, %n {predicate = "le"} : (i32, i32) -> i1
      wi.gstore %q2, %v2, %m3 : ptr<f32>, f32, i1
      scf.yield
    }
    wi.return
  }
}
