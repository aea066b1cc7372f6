// RUN: mask-elim,canonicalize,cse
// Masks proven always true (or lane-uniform) from divisibility and loop facts.

tile.func @uniform(%x: ptr<f32>, %n: i32) attributes {divisibility = (16, 16), kernel = true} {
  %pid = tile.program_id {axis = 0} : i32
  %c16 = arith.constant {value = 16} : i32
  %start = arith.mul %pid, %c16 : i32
  %r = tile.arange {end = 16, start = 0} : tile<16xi32>
  %s = tile.splat %start : (i32) -> tile<16xi32>
  %offs = arith.add %s, %r : tile<16xi32>
  %ns = tile.splat %n : (i32) -> tile<16xi32>
  %m = arith.cmp %offs, %ns {predicate = "lt"} : (tile<16xi32>, tile<16xi32>) -> tile<16xi1>
  %xs = tile.splat %x : (ptr<f32>) -> tile<16xptr<f32>>
  %p = tile.addptr %xs, %offs : (tile<16xptr<f32>>, tile<16xi32>) -> tile<16xptr<f32>>
  %v = tile.load %p, %m : (tile<16xptr<f32>>, tile<16xi1>) -> tile<16xf32>
  tile.store %p, %v, %m : tile<16xptr<f32>>, tile<16xf32>, tile<16xi1>
  tile.return
}
// start and n are multiples of 16 and lanes add 0..15: every lane agrees with start < n.
// CHECK: = arith.cmp %start, %n {predicate = "lt"} : (i32, i32) -> i1
// CHECK: scf.if
// CHECK-NEXT: tile.load %p : (tile<16xptr<f32>>) -> tile<16xf32>
// CHECK: tile.store %p, %v : tile<16xptr<f32>>, tile<16xf32>
// CHECK-NOT: xi1>
// CHECK: tile.return

// -----

tile.func @too_wide(%x: ptr<f32>, %n: i32) attributes {divisibility = (16, 16), kernel = true} {
  %pid = tile.program_id {axis = 0} : i32
  %c32 = arith.constant {value = 32} : i32
  %start = arith.mul %pid, %c32 : i32
  %r = tile.arange {end = 32, start = 0} : tile<32xi32>
  %s = tile.splat %start : (i32) -> tile<32xi32>
  %offs = arith.add %s, %r : tile<32xi32>
  %ns = tile.splat %n : (i32) -> tile<32xi32>
  %m = arith.cmp %offs, %ns {predicate = "lt"} : (tile<32xi32>, tile<32xi32>) -> tile<32xi1>
  %xs = tile.splat %x : (ptr<f32>) -> tile<32xptr<f32>>
  %p = tile.addptr %xs, %offs : (tile<32xptr<f32>>, tile<32xi32>) -> tile<32xptr<f32>>
  %v = tile.load %p, %m : (tile<32xptr<f32>>, tile<32xi1>) -> tile<32xf32>
  tile.store %p, %v, %m : tile<32xptr<f32>>, tile<32xf32>, tile<32xi1>
  tile.return
}
// n is only known to be a multiple of 16 < 32 lanes: a partial block is possible, the mask stays.
// CHECK: %m = arith.cmp %offs, %ns {predicate = "lt"}
// CHECK: tile.load %p, %m
// CHECK: tile.store %p, %v, %m
// CHECK-NOT: scf.if

// -----

tile.func @hinted(%x: ptr<f32>, %n: i32) attributes {divisibility = (16, 1), kernel = true} {
  %pid = tile.program_id {axis = 0} : i32
  %c64 = arith.constant {value = 64} : i32
  %start = arith.mul %pid, %c64 : i32
  %nh = tile.hint %n {multiple_of = (64)} : (i32) -> i32
  %r = tile.arange {end = 64, start = 0} : tile<64xi32>
  %s = tile.splat %start : (i32) -> tile<64xi32>
  %offs = arith.add %s, %r : tile<64xi32>
  %ns = tile.splat %nh : (i32) -> tile<64xi32>
  %m = arith.cmp %ns, %offs {predicate = "gt"} : (tile<64xi32>, tile<64xi32>) -> tile<64xi1>
  %xs = tile.splat %x : (ptr<f32>) -> tile<64xptr<f32>>
  %p = tile.addptr %xs, %offs : (tile<64xptr<f32>>, tile<64xi32>) -> tile<64xptr<f32>>
  %z = arith.constant {value = 1.0} : tile<64xf32>
  %v = tile.load %p, %m, %z : (tile<64xptr<f32>>, tile<64xi1>, tile<64xf32>) -> tile<64xf32>
  tile.store %p, %v : tile<64xptr<f32>>, tile<64xf32>
  tile.return
}
// kl.multiple_of(n, 64) makes the mask uniform; a masked-off load yields `other`.
// CHECK: = arith.cmp %start, %nh {predicate = "lt"} : (i32, i32) -> i1
// CHECK: scf.if
// CHECK-NEXT: tile.load %p : (tile<64xptr<f32>>) -> tile<64xf32>
// CHECK: scf.yield %z

// -----

tile.func @loop_bound(%x: ptr<f32>, %n: i32) -> (tile<16xf32>) attributes {divisibility = (16, 16)} {
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
// k is a multiple of 16 (lb 0, step 16) and k < n inside the loop: the mask is always true.
// CHECK: scf.for
// CHECK: %v = tile.load %p : (tile<16xptr<f32>>) -> tile<16xf32>
// CHECK-NOT: scf.if
// CHECK: tile.return %r

// -----

tile.func @constant_masks(%x: ptr<f32>) -> (tile<4xf32>) {
  %t = arith.constant {value = true} : tile<4xi1>
  %f = arith.constant {value = false} : tile<4xi1>
  %xs = tile.splat %x : (ptr<f32>) -> tile<4xptr<f32>>
  %o = arith.constant {value = 2.0} : tile<4xf32>
  %a = tile.load %xs, %t, %o : (tile<4xptr<f32>>, tile<4xi1>, tile<4xf32>) -> tile<4xf32>
  %b = tile.load %xs, %f, %o : (tile<4xptr<f32>>, tile<4xi1>, tile<4xf32>) -> tile<4xf32>
  tile.store %xs, %a, %f : tile<4xptr<f32>>, tile<4xf32>, tile<4xi1>
  tile.store %xs, %b, %t : tile<4xptr<f32>>, tile<4xf32>, tile<4xi1>
  tile.return %a : tile<4xf32>
}
// All-true: mask and other dropped; all-false load: other; all-false store: gone.
// CHECK: %a = tile.load %xs : (tile<4xptr<f32>>) -> tile<4xf32>
// CHECK-NEXT: tile.store %xs, %o : tile<4xptr<f32>>, tile<4xf32>
// CHECK-NEXT: tile.return %a
