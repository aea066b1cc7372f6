builtin.module {
  tile.func @softmax(%out_ptr: ptr<f32>, %in_ptr: ptr<f32>, %in_stride: i32, %out_stride: i32, %n_cols: i32) attributes {divisibility = (16, 16, 1, 1, 1), kernel = true} {
    %row = tile.program_id {axis = 0} : i32
    %cols = tile.arange {end = 16, start = 0} : tile<16xi32>
    %0 = tile.splat %n_cols : (i32) -> tile<16xi32>
    %mask = arith.cmp %cols, %0 {predicate = "lt"} : (tile<16xi32>, tile<16xi32>) -> tile<16xi1>
    %1 = arith.mul %row, %in_stride : i32
    %2 = tile.addptr %in_ptr, %1 : (ptr<f32>, i32) -> ptr<f32>
    %3 = tile.splat %2 : (ptr<f32>) -> tile<16xptr<f32>>
    %4 = tile.addptr %3, %cols : (tile<16xptr<f32>>, tile<16xi32>) -> tile<16xptr<f32>>
    %5 = arith.constant {value = -inf} : f32
    %6 = arith.constant {value = -inf} : tile<16xf32>
    %x = tile.load %4, %mask, %6 : (tile<16xptr<f32>>, tile<16xi1>, tile<16xf32>) -> tile<16xf32>
    %7 = tile.reduce %x {axis = 0} : (tile<16xf32>) -> f32 {
    ^bb0(%8: f32, %9: f32):
      %10 = arith.max %8, %9 {propagate_nan = false} : f32
      scf.yield %10 : f32
    }
    %11 = tile.splat %7 : (f32) -> tile<16xf32>
    %x_1 = arith.sub %x, %11 : tile<16xf32>
    %num = math.exp %x_1 : tile<16xf32>
    %den = tile.reduce %num {axis = 0} : (tile<16xf32>) -> f32 {
    ^bb0(%12: f32, %13: f32):
      %14 = arith.add %12, %13 : f32
      scf.yield %14 : f32
    }
    %15 = arith.mul %row, %out_stride : i32
    %16 = tile.addptr %out_ptr, %15 : (ptr<f32>, i32) -> ptr<f32>
    %17 = tile.splat %16 : (ptr<f32>) -> tile<16xptr<f32>>
    %18 = tile.addptr %17, %cols : (tile<16xptr<f32>>, tile<16xi32>) -> tile<16xptr<f32>>
    %19 = tile.splat %den : (f32) -> tile<16xf32>
    %20 = arith.div %num, %19 : tile<16xf32>
    tile.store %18, %20, %mask : tile<16xptr<f32>>, tile<16xf32>, tile<16xi1>
    tile.return
  }
}
