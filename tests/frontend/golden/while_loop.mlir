builtin.module {
  tile.func @while_loop(%out_ptr: ptr<i32>, %n: i32) attributes {divisibility = (16, 1), kernel = true} {
    %i = arith.constant {value = 0} : i32
    %total = arith.constant {value = 0} : i32
    %total_1, %i_1 = scf.while %total, %i : i32 {
    ^bb0(%total_2: i32, %i_2: i32):
      %0 = arith.cmp %i_2, %n {predicate = "lt"} : (i32, i32) -> i1
      scf.condition %0, %total_2, %i_2 : i1, i32, i32
    } {
    ^bb0(%total_3: i32, %i_3: i32):
      %total_4 = arith.add %total_3, %i_3 : i32
      %1 = arith.constant {value = 1} : i32
      %i_4 = arith.add %i_3, %1 : i32
      scf.yield %total_4, %i_4 : i32, i32
    }
    tile.store %out_ptr, %total_1 : ptr<i32>, i32
    tile.return
  }
}
