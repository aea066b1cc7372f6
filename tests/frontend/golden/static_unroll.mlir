builtin.module {
  tile.func @static_unroll(%x_ptr: ptr<f32>, %out_ptr: ptr<f32>) attributes {divisibility = (16, 16), kernel = true} {
    %acc = tile.load %x_ptr : (ptr<f32>) -> f32
    %0 = arith.constant {value = 1.0} : f32
    %acc_1 = arith.mul %acc, %0 : f32
    %1 = arith.constant {value = 2.0} : f32
    %acc_2 = arith.mul %acc_1, %1 : f32
    %2 = arith.constant {value = 3.0} : f32
    %acc_3 = arith.mul %acc_2, %2 : f32
    tile.store %out_ptr, %acc_3 : ptr<f32>, f32
    tile.return
  }
}
