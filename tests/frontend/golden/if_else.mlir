builtin.module {
  tile.func @if_else(%x_ptr: ptr<f32>, %out_ptr: ptr<f32>, %flag: i32) attributes {divisibility = (16, 16, 1), kernel = true} {
    %x = tile.load %x_ptr : (ptr<f32>) -> f32
    %0 = arith.constant {value = 0} : i32
    %1 = arith.cmp %flag, %0 {predicate = "gt"} : (i32, i32) -> i1
    %y, %z = scf.if %1 : (i1) -> (f32, i32) {
      %2 = arith.constant {value = 2.0} : f32
      %y_1 = arith.mul %x, %2 : f32
      %z_1 = arith.constant {value = 1} : i32
      scf.yield %y_1, %z_1 : f32, i32
    } {
      %3 = arith.constant {value = 1.0} : f32
      %y_2 = arith.sub %x, %3 : f32
      %z_2 = arith.constant {value = 2} : i32
      scf.yield %y_2, %z_2 : f32, i32
    }
    %4 = arith.cast %z : (i32) -> f32
    %5 = arith.add %y, %4 : f32
    tile.store %out_ptr, %5 : ptr<f32>, f32
    tile.return
  }
}
