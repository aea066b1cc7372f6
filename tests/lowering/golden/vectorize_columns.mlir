// before
builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %c4096 = arith.constant {value = 4096} : i32
    %tile = wi.alloc : memref<4096xf32, private>
    scf.for %c0, %c4096, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %col = arith.rem %s, %c64 : i32
      %row = arith.div %s, %c64 : i32
      %t = arith.mul %col, %c64 : i32
      %i = arith.add %t, %row : i32
      %v = wi.load %tile, %i : (memref<4096xf32, private>, i32) -> f32
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
    %tile = wi.alloc : memref<4096xf32, private>
    %0 = arith.constant {value = 4096} : i32
    %1 = arith.constant {value = 16} : i32
    scf.for %c0, %0, %1 : i32, i32, i32 {
    ^bb0(%2: i32):
      %3 = arith.rem %2, %c64 : i32
      %4 = arith.div %2, %c64 : i32
      %5 = arith.mul %3, %c64 : i32
      %6 = arith.add %5, %4 : i32
      %7 = wi.vload %tile, %6 {stride = 64} : (memref<4096xf32, private>, i32) -> vector<16xf32>
      %8 = wi.addptr %y, %2 : (ptr<f32>, i32) -> ptr<f32>
      wi.gvstore %8, %7 : ptr<f32>, vector<16xf32>
      scf.yield
    }
    wi.return
  }
}
