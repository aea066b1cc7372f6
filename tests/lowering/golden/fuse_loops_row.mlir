// before
builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %ninf = arith.constant {value = -inf} : f32
    %a = wi.alloc : memref<64xf32, private>
    %e = wi.alloc : memref<64xf32, private>
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %m = arith.cmp %s, %n {predicate = "lt"} : (i32, i32) -> i1
      %v = wi.gload %p, %m, %ninf : (ptr<f32>, i1, f32) -> f32
      wi.store %v, %a, %s : f32, memref<64xf32, private>, i32
      scf.yield
    }
    %a0 = wi.load %a, %c0 : (memref<64xf32, private>, i32) -> f32
    %mx = scf.for %c1, %c64, %c1, %a0 : (i32, i32, i32, f32) -> f32 {
    ^bb0(%s2: i32, %acc: f32):
      %l = wi.load %a, %s2 : (memref<64xf32, private>, i32) -> f32
      %r = arith.max %acc, %l {propagate_nan = false} : f32
      scf.yield %r : f32
    }
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%s3: i32):
      %l3 = wi.load %a, %s3 : (memref<64xf32, private>, i32) -> f32
      %d = arith.sub %l3, %mx : f32
      %x3 = math.exp %d : f32
      wi.store %x3, %e, %s3 : f32, memref<64xf32, private>, i32
      scf.yield
    }
    %e0 = wi.load %e, %c0 : (memref<64xf32, private>, i32) -> f32
    %sum = scf.for %c1, %c64, %c1, %e0 : (i32, i32, i32, f32) -> f32 {
    ^bb0(%s4: i32, %acc4: f32):
      %l4 = wi.load %e, %s4 : (memref<64xf32, private>, i32) -> f32
      %r4 = arith.add %acc4, %l4 : f32
      scf.yield %r4 : f32
    }
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%s5: i32):
      %l5 = wi.load %e, %s5 : (memref<64xf32, private>, i32) -> f32
      %q = arith.div %l5, %sum : f32
      %p5 = wi.addptr %y, %s5 : (ptr<f32>, i32) -> ptr<f32>
      %m5 = arith.cmp %s5, %n {predicate = "lt"} : (i32, i32) -> i1
      wi.gstore %p5, %q, %m5 : ptr<f32>, f32, i1
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
    %e = wi.alloc : memref<64xf32, private>
    %0 = arith.constant {value = nan} : f32
    %1 = scf.for %c0, %c64, %c1, %0 : (i32, i32, i32, f32) -> f32 {
    ^bb0(%2: i32, %3: f32):
      %p = wi.addptr %x, %2 : (ptr<f32>, i32) -> ptr<f32>
      %m = arith.cmp %2, %n {predicate = "lt"} : (i32, i32) -> i1
      %v = wi.gload %p, %m, %ninf : (ptr<f32>, i1, f32) -> f32
      %r = arith.max %3, %v {propagate_nan = false} : f32
      scf.yield %r : f32
    }
    %4 = arith.constant {value = -0.0} : f32
    %5 = scf.for %c0, %c64, %c1, %4 : (i32, i32, i32, f32) -> f32 {
    ^bb0(%6: i32, %7: f32):
      %8 = wi.addptr %x, %6 : (ptr<f32>, i32) -> ptr<f32>
      %9 = arith.cmp %6, %n {predicate = "lt"} : (i32, i32) -> i1
      %10 = wi.gload %8, %9, %ninf : (ptr<f32>, i1, f32) -> f32
      %d = arith.sub %10, %1 : f32
      %x3 = math.exp %d : f32
      wi.store %x3, %e, %6 : f32, memref<64xf32, private>, i32
      %r4 = arith.add %7, %x3 : f32
      scf.yield %r4 : f32
    }
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%s5: i32):
      %l5 = wi.load %e, %s5 : (memref<64xf32, private>, i32) -> f32
      %q = arith.div %l5, %5 : f32
      %p5 = wi.addptr %y, %s5 : (ptr<f32>, i32) -> ptr<f32>
      %m5 = arith.cmp %s5, %n {predicate = "lt"} : (i32, i32) -> i1
      wi.gstore %p5, %q, %m5 : ptr<f32>, f32, i1
      scf.yield
    }
    wi.return
  }
}
