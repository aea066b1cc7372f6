// Golden round-trip for the tile dialect (funcs, calls, memory, shapes, dot, reduce/scan, atomics, debug ops).
builtin.module {sym_name = "tiles"} {
  tile.func @combine(%a: f32, %b: f32) -> (f32) {
    %0 = arith.add %a, %b : f32
    tile.return %0 : f32
  }
  tile.func @noname(%0: i32) -> (i32) {
    tile.return %0 : i32
  }
  tile.func @nothing() {
    tile.return
  }
  tile.func @kernel(%x_ptr: ptr<f32>, %y_ptr: ptr<f32>, %out: ptr<f32>, %i_ptr: ptr<i32>, %n_elements: i32) attributes {divisibility = (16, 16, 16, 16, 1), kernel = true} {
    %pid = tile.program_id {axis = 0} : i32
    %pid_1 = tile.program_id {axis = 2} : i32
    %0 = tile.num_programs {axis = 1} : i32
    %offsets = tile.arange {end = 128, start = 0} : tile<128xi32>
    %1 = arith.mul %pid, %0 : i32
    %2 = tile.splat %1 : (i32) -> tile<128xi32>
    %offsets_1 = arith.add %2, %offsets : tile<128xi32>
    %3 = tile.hint %offsets_1 {max_contiguous = (128), multiple_of = (16)} : tile<128xi32>
    %4 = tile.splat %n_elements : (i32) -> tile<128xi32>
    %mask = arith.cmp %3, %4 {predicate = "lt"} : (tile<128xi32>, tile<128xi32>) -> tile<128xi1>
    %5 = tile.splat %x_ptr : (ptr<f32>) -> tile<128xptr<f32>>
    %6 = tile.addptr %5, %3 : (tile<128xptr<f32>>, tile<128xi32>) -> tile<128xptr<f32>>
    %7 = tile.splat %y_ptr : (ptr<f32>) -> tile<128xptr<f32>>
    %8 = tile.addptr %7, %3 : (tile<128xptr<f32>>, tile<128xi32>) -> tile<128xptr<f32>>
    %9 = tile.splat %out : (ptr<f32>) -> tile<128xptr<f32>>
    %10 = tile.addptr %9, %3 : (tile<128xptr<f32>>, tile<128xi32>) -> tile<128xptr<f32>>
    %11 = arith.constant {value = -inf} : tile<128xf32>
    %x = tile.load %6 {cache = ".ca", volatile = true} : (tile<128xptr<f32>>) -> tile<128xf32>
    %y = tile.load %8, %mask : (tile<128xptr<f32>>, tile<128xi1>) -> tile<128xf32>
    %12 = tile.load %8, %mask, %11 {eviction = "evict_last"} : (tile<128xptr<f32>>, tile<128xi1>, tile<128xf32>) -> tile<128xf32>
    %13 = arith.add %x, %y : tile<128xf32>
    %14 = arith.add %13, %12 : tile<128xf32>
    tile.store %10, %14, %mask {cache = ".wb"} : tile<128xptr<f32>>, tile<128xf32>, tile<128xi1>
    tile.store %10, %14 : tile<128xptr<f32>>, tile<128xf32>
    %15 = tile.expand_dims %14 {axis = 1} : (tile<128xf32>) -> tile<128x1xf32>
    %16 = tile.broadcast %15 : (tile<128x1xf32>) -> tile<128x4xf32>
    %17 = tile.permute %16 {order = (1, 0)} : (tile<128x4xf32>) -> tile<4x128xf32>
    %18 = tile.reshape %17 : (tile<4x128xf32>) -> tile<512xf32>
    %19 = tile.join %18, %18 : (tile<512xf32>, tile<512xf32>) -> tile<512x2xf32>
    %lo, %hi = tile.split %19 : (tile<512x2xf32>) -> (tile<512xf32>, tile<512xf32>)
    %picked = tile.gather %lo, %offsets {axis = 0} : (tile<512xf32>, tile<128xi32>) -> tile<128xf32>
    %20 = arith.constant {value = 1.0} : f32
    %21 = tile.reshape %20 : (f32) -> tile<1xf32>
    %22 = tile.reshape %21 : (tile<1xf32>) -> f32
    %23 = tile.expand_dims %22 {axis = 0} : (f32) -> tile<1xf32>
    %24 = tile.reshape %lo : (tile<512xf32>) -> tile<16x32xf32>
    %25 = tile.reshape %hi : (tile<512xf32>) -> tile<32x16xf32>
    %acc = arith.constant {value = 0.0} : tile<16x16xf32>
    %acc_1 = tile.dot %24, %25, %acc {input_precision = "ieee"} : (tile<16x32xf32>, tile<32x16xf32>, tile<16x16xf32>) -> tile<16x16xf32>
    %26 = arith.constant {value = 1} : tile<2x4x8xi8>
    %27 = arith.constant {value = 2} : tile<2x8x4xi8>
    %28 = arith.constant {value = 0} : tile<2x4x4xi32>
    %29 = tile.dot %26, %27, %28 : (tile<2x4x8xi8>, tile<2x8x4xi8>, tile<2x4x4xi32>) -> tile<2x4x4xi32>
    %30 = tile.arange {end = 16, start = 0} : tile<16xi32>
    %31 = tile.expand_dims %30 {axis = 0} : (tile<16xi32>) -> tile<1x16xi32>
    %32 = tile.broadcast %31 : (tile<1x16xi32>) -> tile<16x16xi32>
    %33, %34 = tile.reduce %acc_1, %32 {axis = 1} : (tile<16x16xf32>, tile<16x16xi32>) -> (tile<16xf32>, tile<16xi32>) {
    ^bb0(%v0: f32, %i0: i32, %v1: f32, %i1: i32):
      %35 = arith.cmp %v1, %v0 {predicate = "gt"} : (f32, f32) -> i1
      %36 = arith.select %35, %v1, %v0 : (i1, f32, f32) -> f32
      %37 = arith.select %35, %i1, %i0 : (i1, i32, i32) -> i32
      scf.yield %36, %37 : f32, i32
    }
    %38 = tile.reduce %33 {axis = 0} : (tile<16xf32>) -> f32 {
    ^bb0(%39: f32, %40: f32):
      %41 = tile.call %39, %40 {callee = @combine} : f32
      scf.yield %41 : f32
    }
    %42 = tile.scan %30 {axis = 0, reverse = true} : tile<16xi32> {
    ^bb0(%43: i32, %44: i32):
      %45 = arith.add %43, %44 : i32
      scf.yield %45 : i32
    }
    %46 = tile.splat %i_ptr : (ptr<i32>) -> tile<16xptr<i32>>
    %47 = tile.addptr %46, %30 : (tile<16xptr<i32>>, tile<16xi32>) -> tile<16xptr<i32>>
    %48 = arith.constant {value = 8} : tile<16xi32>
    %49 = arith.cmp %30, %48 {predicate = "lt"} : (tile<16xi32>, tile<16xi32>) -> tile<16xi1>
    %50 = tile.atomic_rmw %47, %30 {kind = "add"} : (tile<16xptr<i32>>, tile<16xi32>) -> tile<16xi32>
    %51 = tile.atomic_rmw %47, %30, %49 {kind = "xor", scope = "sys", sem = "relaxed"} : (tile<16xptr<i32>>, tile<16xi32>, tile<16xi1>) -> tile<16xi32>
    %52 = tile.atomic_rmw %x_ptr, %38 {kind = "max", scope = "cta", sem = "acquire"} : (ptr<f32>, f32) -> f32
    %53 = tile.atomic_cas %47, %30, %30 {scope = "gpu", sem = "acq_rel"} : (tile<16xptr<i32>>, tile<16xi32>, tile<16xi32>) -> tile<16xi32>
    %54 = tile.atomic_cas %i_ptr, %n_elements, %pid : (ptr<i32>, i32, i32) -> i32
    %table = arith.cast %x_ptr : (ptr<f32>) -> ptr<ptr<f32>>
    %row = tile.load %table : (ptr<ptr<f32>>) -> ptr<f32>
    tile.store %table, %row : ptr<ptr<f32>>, ptr<f32>
    %55 = tile.call %38, %38 {callee = @combine} : f32
    tile.call {callee = @nothing}
    tile.print %pid, %34 {hex = true, prefix = "pid \"quoted\"\n\ttab \\ back"} : i32, tile<16xi32>
    tile.print {prefix = "λ ünïcode \x00\x7f\u2028"}
    tile.assert %mask {message = "n must be positive: {n}"} : tile<128xi1>
    tile.return
  }
}
