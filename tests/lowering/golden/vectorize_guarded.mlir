// before
builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %c4096 = arith.constant {value = 4096} : i32
    %z = arith.constant {value = -1.0} : f32
    scf.for %c0, %c4096, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %row = arith.div %s, %c64 : i32
      %m = arith.cmp %row, %n {predicate = "lt"} : (i32, i32) -> i1
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %v = wi.gload %p, %m, %z : (ptr<f32>, i1, f32) -> f32
      %w = math.exp2 %v : f32
      %q = wi.addptr %y, %s : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q, %w, %m : ptr<f32>, f32, i1
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
    %c4096 = arith.constant {value = 4096} : i32
    %z = arith.constant {value = -1.0} : f32
    %0 = arith.constant {value = 4096} : i32
    %1 = arith.constant {value = 16} : i32
    scf.for %c0, %0, %1 : i32, i32, i32 {
    ^bb0(%2: i32):
      %3 = arith.div %2, %c64 : i32
      %4 = arith.cmp %3, %n {predicate = "lt"} : (i32, i32) -> i1
      %5 = wi.addptr %x, %2 : (ptr<f32>, i32) -> ptr<f32>
      %6 = wi.gvload %5, %4, %z : (ptr<f32>, i1, f32) -> vector<16xf32>
      %7 = math.exp2 %6 : vector<16xf32>
      %8 = wi.addptr %y, %2 : (ptr<f32>, i32) -> ptr<f32>
      wi.gvstore %8, %7, %4 : ptr<f32>, vector<16xf32>, i1
      scf.yield
    }
    wi.return
  }
}
