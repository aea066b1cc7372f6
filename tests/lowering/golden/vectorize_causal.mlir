// before
builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %c4096 = arith.constant {value = 4096} : i32
    %ninf = arith.constant {value = -inf} : f32
    scf.for %c0, %c4096, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %col = arith.rem %s, %c64 : i32
      %row = arith.div %s, %c64 : i32
      %m = arith.cmp %col, %row {predicate = "le"} : (i32, i32) -> i1
      %fc = arith.cast %col : (i32) -> f32
      %v = arith.select %m, %fc, %ninf : (i1, f32, f32) -> f32
      %q = wi.addptr %y, %s : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q, %v : ptr<f32>, f32
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
    %ninf = arith.constant {value = -inf} : f32
    %0 = wi.lane_ids : vector<16xi32>
    %1 = wi.broadcast %ninf : (f32) -> vector<16xf32>
    %2 = arith.constant {value = 4096} : i32
    %3 = arith.constant {value = 16} : i32
    scf.for %c0, %2, %3 : i32, i32, i32 {
    ^bb0(%4: i32):
      %5 = arith.rem %4, %c64 : i32
      %6 = arith.div %4, %c64 : i32
      %7 = wi.broadcast %5 : (i32) -> vector<16xi32>
      %8 = arith.add %7, %0 : vector<16xi32>
      %9 = wi.broadcast %6 : (i32) -> vector<16xi32>
      %10 = arith.cmp %8, %9 {predicate = "le"} : (vector<16xi32>, vector<16xi32>) -> vector<16xi1>
      %11 = arith.cast %8 : (vector<16xi32>) -> vector<16xf32>
      %12 = arith.select %10, %11, %1 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      %13 = wi.addptr %y, %4 : (ptr<f32>, i32) -> ptr<f32>
      wi.gvstore %13, %12 : ptr<f32>, vector<16xf32>
      scf.yield
    }
    wi.return
  }
}
