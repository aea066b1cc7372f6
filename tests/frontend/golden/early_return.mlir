builtin.module {
  tile.func @early_return(%x_ptr: ptr<f32>, %out_ptr: ptr<f32>, %n: i32) attributes {divisibility = (16, 16, 1), kernel = true} {
    %pid = tile.program_id {axis = 0} : i32
    %0 = arith.cmp %pid, %n {predicate = "ge"} : (i32, i32) -> i1
    scf.if %0 : i1 {
      scf.yield
    } {
      %1 = tile.addptr %out_ptr, %pid : (ptr<f32>, i32) -> ptr<f32>
      %2 = tile.addptr %x_ptr, %pid : (ptr<f32>, i32) -> ptr<f32>
      %3 = tile.load %2 : (ptr<f32>) -> f32
      %4 = arith.constant {value = 1.0} : f32
      %5 = arith.add %3, %4 : f32
      tile.store %1, %5 : ptr<f32>, f32
      scf.yield
    }
    tile.return
  }
}
