builtin.module {
  tile.func @helper__t4f32__scale_2d0_BIAS_1d0(%x: tile<4xf32>) -> (tile<4xf32>, tile<4xf32>) {
    %0 = arith.constant {value = 2.0} : f32
    %1 = arith.constant {value = 2.0} : tile<4xf32>
    %2 = arith.mul %x, %1 : tile<4xf32>
    %3 = arith.constant {value = 1.0} : f32
    %4 = arith.constant {value = 1.0} : tile<4xf32>
    %5 = arith.add %2, %4 : tile<4xf32>
    %6 = arith.constant {value = 2.0} : f32
    %7 = arith.constant {value = 2.0} : tile<4xf32>
    %8 = arith.sub %x, %7 : tile<4xf32>
    tile.return %5, %8 : tile<4xf32>, tile<4xf32>
  }
  tile.func @helper__t4f32__scale_3d0_BIAS_0d5(%x: tile<4xf32>) -> (tile<4xf32>, tile<4xf32>) {
    %0 = arith.constant {value = 3.0} : f32
    %1 = arith.constant {value = 3.0} : tile<4xf32>
    %2 = arith.mul %x, %1 : tile<4xf32>
    %3 = arith.constant {value = 0.5} : f32
    %4 = arith.constant {value = 0.5} : tile<4xf32>
    %5 = arith.add %2, %4 : tile<4xf32>
    %6 = arith.constant {value = 3.0} : f32
    %7 = arith.constant {value = 3.0} : tile<4xf32>
    %8 = arith.sub %x, %7 : tile<4xf32>
    tile.return %5, %8 : tile<4xf32>, tile<4xf32>
  }
  tile.func @clamp_pos__f32(%x: f32) -> (f32) {
    %0 = arith.constant {value = 0.0} : f32
    %1 = arith.cmp %x, %0 {predicate = "lt"} : (f32, f32) -> i1
    %2 = scf.if %1 : (i1) -> f32 {
      %3 = arith.constant {value = 0.0} : f32
      scf.yield %3 : f32
    } {
      scf.yield %x : f32
    }
    tile.return %2 : f32
  }
  tile.func @call_helper(%x_ptr: ptr<f32>, %out_ptr: ptr<f32>) attributes {divisibility = (16, 16), kernel = true} {
    %offs = tile.arange {end = 4, start = 0} : tile<4xi32>
    %0 = tile.splat %x_ptr : (ptr<f32>) -> tile<4xptr<f32>>
    %1 = tile.addptr %0, %offs : (tile<4xptr<f32>>, tile<4xi32>) -> tile<4xptr<f32>>
    %x = tile.load %1 : (tile<4xptr<f32>>) -> tile<4xf32>
    %a, %b = tile.call %x {callee = @helper__t4f32__scale_2d0_BIAS_1d0} : tile<4xf32>
    %c, %_ = tile.call %x {callee = @helper__t4f32__scale_3d0_BIAS_0d5} : tile<4xf32>
    %2 = tile.splat %out_ptr : (ptr<f32>) -> tile<4xptr<f32>>
    %3 = tile.addptr %2, %offs : (tile<4xptr<f32>>, tile<4xi32>) -> tile<4xptr<f32>>
    %4 = arith.add %a, %b : tile<4xf32>
    %5 = arith.add %4, %c : tile<4xf32>
    tile.store %3, %5 : tile<4xptr<f32>>, tile<4xf32>
    %6 = arith.constant {value = 4} : i32
    %7 = tile.addptr %out_ptr, %6 : (ptr<f32>, i32) -> ptr<f32>
    %8 = tile.load %x_ptr : (ptr<f32>) -> f32
    %9 = tile.call %8 {callee = @clamp_pos__f32} : f32
    tile.store %7, %9 : ptr<f32>, f32
    tile.return
  }
}
