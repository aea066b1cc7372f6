// RUN: fuse
// Elementwise epilogues folded into dot accumulators.

tile.func @bias(%a: tile<16x16xf32>, %b: tile<16x16xf32>, %bias: tile<16x16xf32>) -> (tile<16x16xf32>) {
  %z = arith.constant {value = 0.0} : tile<16x16xf32>
  %d = tile.dot %a, %b, %z : (tile<16x16xf32>, tile<16x16xf32>, tile<16x16xf32>) -> tile<16x16xf32>
  %r = arith.add %bias, %d : tile<16x16xf32>
  tile.return %r : tile<16x16xf32>
}
// CHECK: %r = tile.dot %a, %b, %bias : tile<16x16xf32>
// CHECK-NEXT: tile.return %r

// -----

tile.func @two_dots(%a: tile<8x8xi8>, %b: tile<8x8xi8>) -> (tile<8x8xi32>) {
  %z = arith.constant {value = 0} : tile<8x8xi32>
  %d1 = tile.dot %a, %b, %z : (tile<8x8xi8>, tile<8x8xi8>, tile<8x8xi32>) -> tile<8x8xi32>
  %d2 = tile.dot %b, %a, %z : (tile<8x8xi8>, tile<8x8xi8>, tile<8x8xi32>) -> tile<8x8xi32>
  %r = arith.add %d1, %d2 : tile<8x8xi32>
  tile.return %r : tile<8x8xi32>
}
// A sum of products becomes one accumulator chain.
// CHECK: %d2 = tile.dot %b, %a, %z
// CHECK-NEXT: %r = tile.dot %a, %b, %d2
// CHECK-NEXT: tile.return %r

// -----

tile.func @shared(%a: tile<16x16xf32>, %b: tile<16x16xf32>, %c: tile<16x16xf32>) -> (tile<16x16xf32>, tile<16x16xf32>, tile<16x16xf32>) {
  %z = arith.constant {value = 0.0} : tile<16x16xf32>
  %acc = arith.constant {value = 1.0} : tile<16x16xf32>
  %d = tile.dot %a, %b, %z : (tile<16x16xf32>, tile<16x16xf32>, tile<16x16xf32>) -> tile<16x16xf32>
  %e = tile.dot %a, %b, %acc : (tile<16x16xf32>, tile<16x16xf32>, tile<16x16xf32>) -> tile<16x16xf32>
  %r = arith.add %d, %c : tile<16x16xf32>
  %s = arith.add %e, %c : tile<16x16xf32>
  tile.return %r, %d, %s : tile<16x16xf32>, tile<16x16xf32>, tile<16x16xf32>
}
// The dot result is used twice / the accumulator is not zero: unchanged.
// CHECK: %r = arith.add %d, %c
// CHECK: %s = arith.add %e, %c
