// RUN: loop-split,canonicalize,cse
// Blocked loops with an edge mask: a mask-free main loop plus one masked tail iteration.

tile.func @rowsum(%x: ptr<f32>, %n: i32) -> (tile<16xf32>) {
  %c0 = arith.constant {value = 0} : i32
  %c16 = arith.constant {value = 16} : i32
  %acc = arith.constant {value = 0.0} : tile<16xf32>
  %r = scf.for %c0, %n, %c16, %acc : (i32, i32, i32, tile<16xf32>) -> tile<16xf32> {
  ^bb0(%k: i32, %a: tile<16xf32>):
    %ar = tile.arange {end = 16, start = 0} : tile<16xi32>
    %ks = tile.splat %k : (i32) -> tile<16xi32>
    %offs = arith.add %ks, %ar : tile<16xi32>
    %ns = tile.splat %n : (i32) -> tile<16xi32>
    %m = arith.cmp %offs, %ns {predicate = "lt"} : (tile<16xi32>, tile<16xi32>) -> tile<16xi1>
    %xs = tile.splat %x : (ptr<f32>) -> tile<16xptr<f32>>
    %p = tile.addptr %xs, %offs : (tile<16xptr<f32>>, tile<16xi32>) -> tile<16xptr<f32>>
    %v = tile.load %p, %m, %acc : (tile<16xptr<f32>>, tile<16xi1>, tile<16xf32>) -> tile<16xf32>
    %a2 = arith.add %a, %v : tile<16xf32>
    scf.yield %a2 : tile<16xf32>
  }
  tile.return %r : tile<16xf32>
}
// main_ub = ((max(n, 0) - 0) / 16) * 16 (+ 0): the last full block.
// CHECK: %0 = arith.max %n, %c0 : i32
// CHECK-NEXT: %1 = arith.div %0, %c16 : i32
// CHECK-NEXT: %2 = arith.mul %1, %c16 : i32
// CHECK-NEXT: %3 = scf.for %c0, %2, %c16, %acc
// CHECK-NOT: arith.cmp
// CHECK: %v = tile.load %p : (tile<16xptr<f32>>) -> tile<16xf32>
// CHECK: %4 = arith.cmp %2, %n {predicate = "lt"} : (i32, i32) -> i1
// CHECK-NEXT: %r = scf.if %4 : (i1) -> tile<16xf32> {
// CHECK: %ks_1 = tile.splat %2
// CHECK: %m = arith.cmp %offs_1, %ns {predicate = "lt"}
// CHECK: %v_1 = tile.load %p_1, %m, %acc
// CHECK: %a2_1 = arith.add %3, %v_1
// CHECK: scf.yield %3 : tile<16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: tile.return %r

// -----

tile.func @other_bound(%x: ptr<f32>, %n: i32, %lim: i32) {
  %c0 = arith.constant {value = 0} : i32
  %c16 = arith.constant {value = 16} : i32
  scf.for %c0, %n, %c16 : i32, i32, i32 {
  ^bb0(%k: i32):
    %ar = tile.arange {end = 16, start = 0} : tile<16xi32>
    %ks = tile.splat %k : (i32) -> tile<16xi32>
    %offs = arith.add %ks, %ar : tile<16xi32>
    %ls = tile.splat %lim : (i32) -> tile<16xi32>
    %m = arith.cmp %offs, %ls {predicate = "lt"} : (tile<16xi32>, tile<16xi32>) -> tile<16xi1>
    %xs = tile.splat %x : (ptr<f32>) -> tile<16xptr<f32>>
    %p = tile.addptr %xs, %offs : (tile<16xptr<f32>>, tile<16xi32>) -> tile<16xptr<f32>>
    %v = tile.load %p, %m : (tile<16xptr<f32>>, tile<16xi1>) -> tile<16xf32>
    tile.store %p, %v, %m : tile<16xptr<f32>>, tile<16xf32>, tile<16xi1>
    scf.yield
  }
  tile.return
}
// The mask compares against another bound than the loop's: not split.
// CHECK: scf.for %c0, %n, %c16
// CHECK-NOT: scf.if
// CHECK: tile.return
