builtin.module {
  tile.func @matmul(%a_ptr: ptr<f32>, %b_ptr: ptr<f32>, %c_ptr: ptr<f32>, %M: i32, %N: i32, %K: i32, %sam: i32, %sbk: i32, %scm: i32) attributes {divisibility = (16, 16, 16, 1, 1, 1, 1, 1, 1), kernel = true} {
    %pid_m = tile.program_id {axis = 0} : i32
    %pid_n = tile.program_id {axis = 1} : i32
    %0 = arith.constant {value = 16} : i32
    %1 = arith.mul %pid_m, %0 : i32
    %2 = tile.arange {end = 16, start = 0} : tile<16xi32>
    %3 = tile.splat %1 : (i32) -> tile<16xi32>
    %rm = arith.add %3, %2 : tile<16xi32>
    %4 = arith.constant {value = 16} : i32
    %5 = arith.mul %pid_n, %4 : i32
    %6 = tile.arange {end = 16, start = 0} : tile<16xi32>
    %7 = tile.splat %5 : (i32) -> tile<16xi32>
    %rn = arith.add %7, %6 : tile<16xi32>
    %rk = tile.arange {end = 16, start = 0} : tile<16xi32>
    %acc = arith.constant {value = 0.0} : tile<16x16xf32>
    %8 = arith.constant {value = 0} : i32
    %9 = arith.constant {value = 16} : i32
    %acc_1 = scf.for %8, %K, %9, %acc : (i32, i32, i32, tile<16x16xf32>) -> tile<16x16xf32> {
    ^bb0(%k: i32, %acc_2: tile<16x16xf32>):
      %10 = tile.expand_dims %rm {axis = 1} : (tile<16xi32>) -> tile<16x1xi32>
      %11 = tile.splat %sam : (i32) -> tile<16x1xi32>
      %12 = arith.mul %10, %11 : tile<16x1xi32>
      %13 = tile.splat %a_ptr : (ptr<f32>) -> tile<16x1xptr<f32>>
      %14 = tile.addptr %13, %12 : (tile<16x1xptr<f32>>, tile<16x1xi32>) -> tile<16x1xptr<f32>>
      %15 = tile.splat %k : (i32) -> tile<16xi32>
      %16 = arith.add %15, %rk : tile<16xi32>
      %17 = tile.expand_dims %16 {axis = 0} : (tile<16xi32>) -> tile<1x16xi32>
      %18 = arith.constant {value = 1} : i32
      %19 = arith.constant {value = 1} : tile<1x16xi32>
      %20 = arith.mul %17, %19 : tile<1x16xi32>
      %21 = tile.broadcast %14 : (tile<16x1xptr<f32>>) -> tile<16x16xptr<f32>>
      %22 = tile.broadcast %20 : (tile<1x16xi32>) -> tile<16x16xi32>
      %23 = tile.addptr %21, %22 : (tile<16x16xptr<f32>>, tile<16x16xi32>) -> tile<16x16xptr<f32>>
      %24 = tile.expand_dims %rm {axis = 1} : (tile<16xi32>) -> tile<16x1xi32>
      %25 = tile.splat %M : (i32) -> tile<16x1xi32>
      %26 = arith.cmp %24, %25 {predicate = "lt"} : (tile<16x1xi32>, tile<16x1xi32>) -> tile<16x1xi1>
      %27 = tile.splat %k : (i32) -> tile<16xi32>
      %28 = arith.add %27, %rk : tile<16xi32>
      %29 = tile.expand_dims %28 {axis = 0} : (tile<16xi32>) -> tile<1x16xi32>
      %30 = tile.splat %K : (i32) -> tile<1x16xi32>
      %31 = arith.cmp %29, %30 {predicate = "lt"} : (tile<1x16xi32>, tile<1x16xi32>) -> tile<1x16xi1>
      %32 = tile.broadcast %26 : (tile<16x1xi1>) -> tile<16x16xi1>
      %33 = tile.broadcast %31 : (tile<1x16xi1>) -> tile<16x16xi1>
      %34 = arith.and %32, %33 : tile<16x16xi1>
      %35 = arith.constant {value = 0.0} : f32
      %36 = arith.constant {value = 0.0} : tile<16x16xf32>
      %a = tile.load %23, %34, %36 : (tile<16x16xptr<f32>>, tile<16x16xi1>, tile<16x16xf32>) -> tile<16x16xf32>
      %37 = tile.splat %k : (i32) -> tile<16xi32>
      %38 = arith.add %37, %rk : tile<16xi32>
      %39 = tile.expand_dims %38 {axis = 1} : (tile<16xi32>) -> tile<16x1xi32>
      %40 = tile.splat %sbk : (i32) -> tile<16x1xi32>
      %41 = arith.mul %39, %40 : tile<16x1xi32>
      %42 = tile.splat %b_ptr : (ptr<f32>) -> tile<16x1xptr<f32>>
      %43 = tile.addptr %42, %41 : (tile<16x1xptr<f32>>, tile<16x1xi32>) -> tile<16x1xptr<f32>>
      %44 = tile.expand_dims %rn {axis = 0} : (tile<16xi32>) -> tile<1x16xi32>
      %45 = arith.constant {value = 1} : i32
      %46 = arith.constant {value = 1} : tile<1x16xi32>
      %47 = arith.mul %44, %46 : tile<1x16xi32>
      %48 = tile.broadcast %43 : (tile<16x1xptr<f32>>) -> tile<16x16xptr<f32>>
      %49 = tile.broadcast %47 : (tile<1x16xi32>) -> tile<16x16xi32>
      %50 = tile.addptr %48, %49 : (tile<16x16xptr<f32>>, tile<16x16xi32>) -> tile<16x16xptr<f32>>
      %51 = tile.splat %k : (i32) -> tile<16xi32>
      %52 = arith.add %51, %rk : tile<16xi32>
      %53 = tile.expand_dims %52 {axis = 1} : (tile<16xi32>) -> tile<16x1xi32>
      %54 = tile.splat %K : (i32) -> tile<16x1xi32>
      %55 = arith.cmp %53, %54 {predicate = "lt"} : (tile<16x1xi32>, tile<16x1xi32>) -> tile<16x1xi1>
      %56 = tile.expand_dims %rn {axis = 0} : (tile<16xi32>) -> tile<1x16xi32>
      %57 = tile.splat %N : (i32) -> tile<1x16xi32>
      %58 = arith.cmp %56, %57 {predicate = "lt"} : (tile<1x16xi32>, tile<1x16xi32>) -> tile<1x16xi1>
      %59 = tile.broadcast %55 : (tile<16x1xi1>) -> tile<16x16xi1>
      %60 = tile.broadcast %58 : (tile<1x16xi1>) -> tile<16x16xi1>
      %61 = arith.and %59, %60 : tile<16x16xi1>
      %62 = arith.constant {value = 0.0} : f32
      %63 = arith.constant {value = 0.0} : tile<16x16xf32>
      %b = tile.load %50, %61, %63 : (tile<16x16xptr<f32>>, tile<16x16xi1>, tile<16x16xf32>) -> tile<16x16xf32>
      %64 = arith.constant {value = 0.0} : tile<16x16xf32>
      %65 = tile.dot %a, %b, %64 : tile<16x16xf32>
      %acc_3 = arith.add %acc_2, %65 : tile<16x16xf32>
      scf.yield %acc_3 : tile<16x16xf32>
    }
    %66 = tile.expand_dims %rm {axis = 1} : (tile<16xi32>) -> tile<16x1xi32>
    %67 = tile.splat %M : (i32) -> tile<16x1xi32>
    %68 = arith.cmp %66, %67 {predicate = "lt"} : (tile<16x1xi32>, tile<16x1xi32>) -> tile<16x1xi1>
    %69 = tile.expand_dims %rn {axis = 0} : (tile<16xi32>) -> tile<1x16xi32>
    %70 = tile.splat %N : (i32) -> tile<1x16xi32>
    %71 = arith.cmp %69, %70 {predicate = "lt"} : (tile<1x16xi32>, tile<1x16xi32>) -> tile<1x16xi1>
    %72 = tile.broadcast %68 : (tile<16x1xi1>) -> tile<16x16xi1>
    %73 = tile.broadcast %71 : (tile<1x16xi1>) -> tile<16x16xi1>
    %mask = arith.and %72, %73 : tile<16x16xi1>
    %74 = tile.expand_dims %rm {axis = 1} : (tile<16xi32>) -> tile<16x1xi32>
    %75 = tile.splat %scm : (i32) -> tile<16x1xi32>
    %76 = arith.mul %74, %75 : tile<16x1xi32>
    %77 = tile.splat %c_ptr : (ptr<f32>) -> tile<16x1xptr<f32>>
    %78 = tile.addptr %77, %76 : (tile<16x1xptr<f32>>, tile<16x1xi32>) -> tile<16x1xptr<f32>>
    %79 = tile.expand_dims %rn {axis = 0} : (tile<16xi32>) -> tile<1x16xi32>
    %80 = arith.constant {value = 1} : i32
    %81 = arith.constant {value = 1} : tile<1x16xi32>
    %82 = arith.mul %79, %81 : tile<1x16xi32>
    %83 = tile.broadcast %78 : (tile<16x1xptr<f32>>) -> tile<16x16xptr<f32>>
    %84 = tile.broadcast %82 : (tile<1x16xi32>) -> tile<16x16xi32>
    %85 = tile.addptr %83, %84 : (tile<16x16xptr<f32>>, tile<16x16xi32>) -> tile<16x16xptr<f32>>
    tile.store %85, %acc_1, %mask : tile<16x16xptr<f32>>, tile<16x16xf32>, tile<16x16xi1>
    tile.return
  }
}
