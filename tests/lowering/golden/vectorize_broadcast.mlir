// before
builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %c4096 = arith.constant {value = 4096} : i32
    %rowmax = wi.alloc : memref<64xf32, private>
    scf.for %c0, %c4096, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %col = arith.rem %s, %c64 : i32
      %row = arith.div %s, %c64 : i32
      %start = arith.mul %row, %c64 : i32
      %prow = wi.addptr %x, %start : (ptr<f32>, i32) -> ptr<f32>
      %p = wi.addptr %prow, %col : (ptr<f32>, i32) -> ptr<f32>
      %v = wi.gload %p : (ptr<f32>) -> f32
      %m = wi.load %rowmax, %row : (memref<64xf32, private>, i32) -> f32
      %d = arith.sub %v, %m : f32
      %e = math.exp2 %d : f32
      %q = wi.addptr %y, %s : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q, %e : ptr<f32>, f32
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
    %rowmax = wi.alloc : memref<64xf32, private>
    %0 = arith.constant {value = 4096} : i32
    %1 = arith.constant {value = 16} : i32
    scf.for %c0, %0, %1 : i32, i32, i32 {
    ^bb0(%2: i32):
      %3 = arith.rem %2, %c64 : i32
      %4 = arith.div %2, %c64 : i32
      %5 = arith.mul %4, %c64 : i32
      %6 = wi.addptr %x, %5 : (ptr<f32>, i32) -> ptr<f32>
      %7 = wi.addptr %6, %3 : (ptr<f32>, i32) -> ptr<f32>
      %8 = wi.gvload %7 : (ptr<f32>) -> vector<16xf32>
      %9 = wi.load %rowmax, %4 : (memref<64xf32, private>, i32) -> f32
      %10 = wi.broadcast %9 : (f32) -> vector<16xf32>
      %11 = arith.sub %8, %10 : vector<16xf32>
      %12 = math.exp2 %11 : vector<16xf32>
      %13 = wi.addptr %y, %2 : (ptr<f32>, i32) -> ptr<f32>
      wi.gvstore %13, %12 : ptr<f32>, vector<16xf32>
      scf.yield
    }
    wi.return
  }
}
