// RUN: ptr-offsets,canonicalize,cse,dce
// Loop-carried pointer tiles advanced by a uniform step become one i64 offset each.

tile.func @rows(%x: ptr<f32>, %n: i32, %s: i32) -> (tile<4x8xf32>) {
  %c0 = arith.constant {value = 0} : i32
  %c1 = arith.constant {value = 1} : i32
  %ar = tile.arange {end = 8, start = 0} : tile<8xi32>
  %row = tile.expand_dims %ar {axis = 0} : (tile<8xi32>) -> tile<1x8xi32>
  %b = tile.broadcast %row : (tile<1x8xi32>) -> tile<4x8xi32>
  %xs = tile.splat %x : (ptr<f32>) -> tile<4x8xptr<f32>>
  %p0 = tile.addptr %xs, %b : (tile<4x8xptr<f32>>, tile<4x8xi32>) -> tile<4x8xptr<f32>>
  %acc = arith.constant {value = 0.0} : tile<4x8xf32>
  %eight = arith.constant {value = 8} : tile<4x8xi32>
  %r, %p, %q = scf.for %c0, %n, %c1, %acc, %p0, %p0 : (i32, i32, i32, tile<4x8xf32>, tile<4x8xptr<f32>>, tile<4x8xptr<f32>>) -> (tile<4x8xf32>, tile<4x8xptr<f32>>, tile<4x8xptr<f32>>) {
  ^bb0(%k: i32, %a: tile<4x8xf32>, %pa: tile<4x8xptr<f32>>, %pb: tile<4x8xptr<f32>>):
    %v = tile.load %pa : (tile<4x8xptr<f32>>) -> tile<4x8xf32>
    %w = tile.load %pb : (tile<4x8xptr<f32>>) -> tile<4x8xf32>
    %a1 = arith.add %a, %v : tile<4x8xf32>
    %a2 = arith.add %a1, %w : tile<4x8xf32>
    %pa2 = tile.addptr %pa, %eight : (tile<4x8xptr<f32>>, tile<4x8xi32>) -> tile<4x8xptr<f32>>
    %ss = tile.splat %s : (i32) -> tile<4x8xi32>
    %pb2 = tile.addptr %pb, %ss : (tile<4x8xptr<f32>>, tile<4x8xi32>) -> tile<4x8xptr<f32>>
    scf.yield %a2, %pa2, %pb2 : tile<4x8xf32>, tile<4x8xptr<f32>>, tile<4x8xptr<f32>>
  }
  %z = tile.load %q : (tile<4x8xptr<f32>>) -> tile<4x8xf32>
  %out = arith.add %r, %z : tile<4x8xf32>
  tile.return %out : tile<4x8xf32>
}
// The accumulator stays a tile; each pointer tile becomes an i64 offset starting at 0.
// CHECK: %0 = arith.constant {value = 0} : i64
// CHECK-NEXT: %r, %1, %2 = scf.for %c0, %n, %c1, %acc, %0, %0 : (i32, i32, i32, tile<4x8xf32>, i64, i64) -> (tile<4x8xf32>, i64, i64) {
// CHECK-NEXT: ^bb0(%k: i32, %a: tile<4x8xf32>, %pa_off: i64, %pb_off: i64):
// Inside: each pointer tile is the loop-invariant start plus a splat offset.
// CHECK-NEXT: %3 = tile.splat %pa_off : (i64) -> tile<4x8xi64>
// CHECK-NEXT: %pa = tile.addptr %p0, %3 : (tile<4x8xptr<f32>>, tile<4x8xi64>) -> tile<4x8xptr<f32>>
// CHECK-NEXT: %4 = tile.splat %pb_off : (i64) -> tile<4x8xi64>
// CHECK-NEXT: %pb = tile.addptr %p0, %4 : (tile<4x8xptr<f32>>, tile<4x8xi64>) -> tile<4x8xptr<f32>>
// CHECK-NEXT: %v = tile.load %pa
// CHECK-NEXT: %w = tile.load %pb
// The offsets advance by the steps (constant 8; %s sign-extended).
// CHECK: %5 = arith.constant {value = 8} : i64
// CHECK-NEXT: %6 = arith.add %pa_off, %5 : i64
// CHECK-NEXT: %7 = arith.cast %s : (i32) -> i64
// CHECK-NEXT: %8 = arith.add %pb_off, %7 : i64
// CHECK-NEXT: scf.yield %a2, %6, %8 : tile<4x8xf32>, i64, i64
// After the loop only the result still used (%q) is rebuilt as start + offset; %p is gone.
// CHECK: %9 = tile.splat %2 : (i64) -> tile<4x8xi64>
// CHECK-NEXT: %q = tile.addptr %p0, %9
// CHECK-NEXT: %z = tile.load %q

// -----

tile.func @not_uniform(%x: ptr<f32>, %n: i32) {
  %c0 = arith.constant {value = 0} : i32
  %c1 = arith.constant {value = 1} : i32
  %ar = tile.arange {end = 8, start = 0} : tile<8xi32>
  %xs = tile.splat %x : (ptr<f32>) -> tile<8xptr<f32>>
  %p0 = tile.addptr %xs, %ar : (tile<8xptr<f32>>, tile<8xi32>) -> tile<8xptr<f32>>
  %p = scf.for %c0, %n, %c1, %p0 : (i32, i32, i32, tile<8xptr<f32>>) -> tile<8xptr<f32>> {
  ^bb0(%k: i32, %pa: tile<8xptr<f32>>):
    %v = tile.load %pa : (tile<8xptr<f32>>) -> tile<8xf32>
    tile.store %pa, %v : tile<8xptr<f32>>, tile<8xf32>
    %pa2 = tile.addptr %pa, %ar : (tile<8xptr<f32>>, tile<8xi32>) -> tile<8xptr<f32>>
    scf.yield %pa2 : tile<8xptr<f32>>
  }
  tile.return
}
// Lanes move by different amounts: the pointer tile stays carried.
// CHECK: scf.for %c0, %n, %c1, %p0 : (i32, i32, i32, tile<8xptr<f32>>) -> tile<8xptr<f32>>
