builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c4 = arith.constant {value = 4} : i32
    %c512 = arith.constant {value = 512} : i32
    %a = wi.alloc : memref<512xf32, private>
    %b = wi.alloc : memref<512xf32, private>
    %small = wi.alloc : memref<8xf32, private>
    scf.for %c0, %c512, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %v = wi.gload %p : (ptr<f32>) -> f32
      wi.store %v, %a, %s : f32, memref<512xf32, private>, i32
      scf.yield
    }
    scf.for %c0, %c512, %c1 : i32, i32, i32 {
    ^bb0(%s2: i32):
      %l = wi.load %a, %s2 : (memref<512xf32, private>, i32) -> f32
      wi.store %l, %b, %s2 : f32, memref<512xf32, private>, i32
      scf.yield
    }
    scf.for %c0, %c4, %c1 : i32, i32, i32 {
    ^bb0(%i: i32):
      scf.for %c0, %c512, %c1 : i32, i32, i32 {
      ^bb0(%s3: i32):
        %l3 = wi.load %b, %s3 : (memref<512xf32, private>, i32) -> f32
        %w = arith.mul %l3, %l3 : f32
        wi.store %w, %a, %c0 : f32, memref<512xf32, private>, i32
        wi.store %w, %small, %c0 : f32, memref<8xf32, private>, i32
        scf.yield
      }
      %l4 = wi.load %a, %c0 : (memref<512xf32, private>, i32) -> f32
      %l5 = wi.load %small, %c0 : (memref<8xf32, private>, i32) -> f32
      %z = arith.add %l4, %l5 : f32
      %q = wi.addptr %y, %i : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q, %z : ptr<f32>, f32
      scf.yield
    }
    wi.return
  }
}
