builtin.module {
  tile.func @loop_sum(%x_ptr: ptr<f32>, %out_ptr: ptr<f32>, %n: i32) attributes {divisibility = (16, 16, 1), kernel = true} {
    %acc = arith.constant {value = 0.0} : tile<8xf32>
    %count = arith.constant {value = 0} : i32
    %0 = arith.constant {value = 0} : i32
    %1 = arith.constant {value = 8} : i32
    %acc_1, %count_1 = scf.for %0, %n, %1, %acc, %count : (i32, i32, i32, tile<8xf32>, i32) -> (tile<8xf32>, i32) {
    ^bb0(%start: i32, %acc_2: tile<8xf32>, %count_2: i32):
      %2 = tile.arange {end = 8, start = 0} : tile<8xi32>
      %3 = tile.splat %start : (i32) -> tile<8xi32>
      %offs = arith.add %3, %2 : tile<8xi32>
      %4 = tile.splat %x_ptr : (ptr<f32>) -> tile<8xptr<f32>>
      %5 = tile.addptr %4, %offs : (tile<8xptr<f32>>, tile<8xi32>) -> tile<8xptr<f32>>
      %6 = tile.splat %n : (i32) -> tile<8xi32>
      %7 = arith.cmp %offs, %6 {predicate = "lt"} : (tile<8xi32>, tile<8xi32>) -> tile<8xi1>
      %8 = arith.constant {value = 0.0} : f32
      %9 = arith.constant {value = 0.0} : tile<8xf32>
      %10 = tile.load %5, %7, %9 : (tile<8xptr<f32>>, tile<8xi1>, tile<8xf32>) -> tile<8xf32>
      %acc_3 = arith.add %acc_2, %10 : tile<8xf32>
      %11 = arith.constant {value = 1} : i32
      %count_3 = arith.add %count_2, %11 : i32
      scf.yield %acc_3, %count_3 : tile<8xf32>, i32
    }
    %12 = tile.reduce %acc_1 {axis = 0} : (tile<8xf32>) -> f32 {
    ^bb0(%13: f32, %14: f32):
      %15 = arith.add %13, %14 : f32
      scf.yield %15 : f32
    }
    tile.store %out_ptr, %12 : ptr<f32>, f32
    %16 = arith.constant {value = 1} : i32
    %17 = tile.addptr %out_ptr, %16 : (ptr<f32>, i32) -> ptr<f32>
    %18 = arith.cast %count_1 : (i32) -> f32
    tile.store %17, %18 : ptr<f32>, f32
    tile.return
  }
}
