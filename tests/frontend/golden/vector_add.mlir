builtin.module {
  tile.func @vector_add(%x_ptr: ptr<f32>, %y_ptr: ptr<f32>, %out_ptr: ptr<f32>, %n: i32) attributes {divisibility = (16, 16, 16, 1), kernel = true} {
    %pid = tile.program_id {axis = 0} : i32
    %0 = arith.constant {value = 128} : i32
    %1 = arith.mul %pid, %0 : i32
    %2 = tile.arange {end = 128, start = 0} : tile<128xi32>
    %3 = tile.splat %1 : (i32) -> tile<128xi32>
    %offs = arith.add %3, %2 : tile<128xi32>
    %4 = tile.splat %n : (i32) -> tile<128xi32>
    %mask = arith.cmp %offs, %4 {predicate = "lt"} : (tile<128xi32>, tile<128xi32>) -> tile<128xi1>
    %5 = tile.splat %x_ptr : (ptr<f32>) -> tile<128xptr<f32>>
    %6 = tile.addptr %5, %offs : (tile<128xptr<f32>>, tile<128xi32>) -> tile<128xptr<f32>>
    %x = tile.load %6, %mask : (tile<128xptr<f32>>, tile<128xi1>) -> tile<128xf32>
    %7 = tile.splat %y_ptr : (ptr<f32>) -> tile<128xptr<f32>>
    %8 = tile.addptr %7, %offs : (tile<128xptr<f32>>, tile<128xi32>) -> tile<128xptr<f32>>
    %y = tile.load %8, %mask : (tile<128xptr<f32>>, tile<128xi1>) -> tile<128xf32>
    %9 = tile.splat %out_ptr : (ptr<f32>) -> tile<128xptr<f32>>
    %10 = tile.addptr %9, %offs : (tile<128xptr<f32>>, tile<128xi32>) -> tile<128xptr<f32>>
    %11 = arith.add %x, %y : tile<128xf32>
    tile.store %10, %11, %mask : tile<128xptr<f32>>, tile<128xf32>, tile<128xi1>
    tile.return
  }
}
