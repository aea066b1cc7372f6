// RUN: wrap-version
// Index wraps (Triton's `% M`, `where(x < M, x, 0)`): the rest of the kernel, once without them.

tile.func @wrapped(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {kernel = true} {
  %pid = tile.program_id {axis = 0} : i32
  %c16 = arith.constant {value = 16} : i32
  %s = arith.mul %pid, %c16 : i32
  %ar = tile.arange {end = 16, start = 0} : tile<16xi32>
  %ss = tile.splat %s : (i32) -> tile<16xi32>
  %offs = arith.add %ss, %ar : tile<16xi32>
  %ns = tile.splat %n : (i32) -> tile<16xi32>
  %w = arith.rem %offs, %ns : tile<16xi32>
  %xs = tile.splat %x : (ptr<f32>) -> tile<16xptr<f32>>
  %p = tile.addptr %xs, %w : (tile<16xptr<f32>>, tile<16xi32>) -> tile<16xptr<f32>>
  %v = tile.load %p : (tile<16xptr<f32>>) -> tile<16xf32>
  %ys = tile.splat %y : (ptr<f32>) -> tile<16xptr<f32>>
  %q = tile.addptr %ys, %offs : (tile<16xptr<f32>>, tile<16xi32>) -> tile<16xptr<f32>>
  %m = arith.cmp %offs, %ns {predicate = "lt"} : (tile<16xi32>, tile<16xi32>) -> tile<16xi1>
  tile.store %q, %v, %m : tile<16xptr<f32>>, tile<16xf32>, tile<16xi1>
  tile.return
}
// n > 15, s < n - 15, s >= 0: every lane of s + [0..15] is in [0, n)
// CHECK: %s = arith.mul %pid, %c16 : i32
// CHECK-NEXT: %0 = arith.constant {value = 15} : i32
// CHECK-NEXT: %1 = arith.cmp %n, %0 {predicate = "gt"} : (i32, i32) -> i1
// CHECK-NEXT: %2 = arith.sub %n, %0 : i32
// CHECK-NEXT: %3 = arith.cmp %s, %2 {predicate = "lt"} : (i32, i32) -> i1
// CHECK-NEXT: %4 = arith.constant {value = 0} : i32
// CHECK-NEXT: %5 = arith.cmp %s, %4 {predicate = "ge"} : (i32, i32) -> i1
// CHECK-NEXT: %6 = arith.and %1, %3 : i1
// CHECK-NEXT: %7 = arith.and %6, %5 : i1
// CHECK-NEXT: scf.if %7 : i1 {
// CHECK-NOT: arith.rem
// CHECK: %p = tile.addptr %xs, %offs :
// CHECK: scf.yield
// CHECK-NEXT: } {
// CHECK: %w = arith.rem %offs_1, %ns_1
// CHECK: %p_1 = tile.addptr %xs_1, %w :
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: tile.return

// -----

// where(x < n, x, 0) (Triton's tutorial 09): no lower bound is needed.
tile.func @clamped(%x: ptr<f32>, %n: i32) attributes {kernel = true} {
  %pid = tile.program_id {axis = 0} : i32
  %c8 = arith.constant {value = 8} : i32
  %s = arith.mul %pid, %c8 : i32
  %ar = tile.arange {end = 8, start = 0} : tile<8xi32>
  %ss = tile.splat %s : (i32) -> tile<8xi32>
  %offs = arith.add %ss, %ar : tile<8xi32>
  %ns = tile.splat %n : (i32) -> tile<8xi32>
  %m = arith.cmp %offs, %ns {predicate = "lt"} : (tile<8xi32>, tile<8xi32>) -> tile<8xi1>
  %z = arith.constant {value = 0} : tile<8xi32>
  %w = arith.select %m, %offs, %z : (tile<8xi1>, tile<8xi32>, tile<8xi32>) -> tile<8xi32>
  %xs = tile.splat %x : (ptr<f32>) -> tile<8xptr<f32>>
  %p = tile.addptr %xs, %w : (tile<8xptr<f32>>, tile<8xi32>) -> tile<8xptr<f32>>
  %v = tile.load %p : (tile<8xptr<f32>>) -> tile<8xf32>
  tile.store %p, %v : tile<8xptr<f32>>, tile<8xf32>
  tile.return
}
// CHECK: %0 = arith.constant {value = 7} : i32
// CHECK-NEXT: %1 = arith.cmp %n, %0 {predicate = "gt"}
// CHECK-NEXT: %2 = arith.sub %n, %0 : i32
// CHECK-NEXT: %3 = arith.cmp %s, %2 {predicate = "lt"}
// CHECK-NEXT: %4 = arith.and %1, %3 : i1
// CHECK-NEXT: scf.if %4 : i1 {
// CHECK-NOT: arith.select
// CHECK: %p = tile.addptr %xs, %offs :
// CHECK: } {
// CHECK: %w = arith.select %m_1, %offs_1, %z_1
// CHECK: %p_1 = tile.addptr %xs_1, %w :

// -----

// Not versioned: unsigned wraps, a bound varying by lane, and non-kernel functions.
tile.func @unsigned(%x: ptr<f32>, %n: u32, %s: u32) attributes {kernel = true} {
  %ar = tile.arange {end = 8, start = 0} : tile<8xi32>
  %ac = arith.cast %ar : (tile<8xi32>) -> tile<8xu32>
  %ss = tile.splat %s : (u32) -> tile<8xu32>
  %offs = arith.add %ss, %ac : tile<8xu32>
  %ns = tile.splat %n : (u32) -> tile<8xu32>
  %w = arith.rem %offs, %ns : tile<8xu32>
  %xs = tile.splat %x : (ptr<f32>) -> tile<8xptr<f32>>
  %p = tile.addptr %xs, %w : (tile<8xptr<f32>>, tile<8xu32>) -> tile<8xptr<f32>>
  %v = tile.load %p : (tile<8xptr<f32>>) -> tile<8xf32>
  tile.store %p, %v : tile<8xptr<f32>>, tile<8xf32>
  tile.return
}
// CHECK-LABEL: @unsigned
// CHECK-NOT: scf.if
// CHECK: tile.return
