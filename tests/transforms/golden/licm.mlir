// RUN: licm
// Loop-invariant code motion out of scf.for / scf.while.

tile.func @pure_ops(%x: ptr<f32>, %n: i32, %row: i32) -> (tile<16xf32>) {
  %c0 = arith.constant {value = 0} : i32
  %c16 = arith.constant {value = 16} : i32
  %acc = arith.constant {value = 0.0} : tile<16xf32>
  %r = scf.for %c0, %n, %c16, %acc : (i32, i32, i32, tile<16xf32>) -> tile<16xf32> {
  ^bb0(%k: i32, %a: tile<16xf32>):
    %base = arith.mul %row, %n : i32
    %ar = tile.arange {end = 16, start = 0} : tile<16xi32>
    %rowp = tile.addptr %x, %base : (ptr<f32>, i32) -> ptr<f32>
    %ks = tile.splat %k : (i32) -> tile<16xi32>
    %offs = arith.add %ks, %ar : tile<16xi32>
    %q = arith.div %n, %row : i32
    %ps = tile.splat %rowp : (ptr<f32>) -> tile<16xptr<f32>>
    %p = tile.addptr %ps, %offs : (tile<16xptr<f32>>, tile<16xi32>) -> tile<16xptr<f32>>
    %v = tile.load %p : (tile<16xptr<f32>>) -> tile<16xf32>
    %a2 = arith.add %a, %v : tile<16xf32>
    scf.yield %a2 : tile<16xf32>
  }
  tile.return %r : tile<16xf32>
}
// Chains of invariant ops move together; the iv-dependent ones stay; a division
// by a runtime value stays (the loop may run zero times and it could trap).
// CHECK: %acc = arith.constant
// CHECK-NEXT: %base = arith.mul %row, %n : i32
// CHECK-NEXT: %ar = tile.arange
// CHECK-NEXT: %rowp = tile.addptr %x, %base
// CHECK-NEXT: %ps = tile.splat %rowp
// CHECK-NEXT: %r = scf.for
// CHECK: %ks = tile.splat %k
// CHECK-NEXT: %offs = arith.add %ks, %ar
// CHECK-NEXT: %q = arith.div %n, %row
// CHECK-NEXT: %p = tile.addptr %ps, %offs
// CHECK-NEXT: %v = tile.load %p

// -----

tile.func @loads(%x: ptr<f32>, %y: ptr<f32>) -> (f32, f32) {
  %c0 = arith.constant {value = 0} : i32
  %c1 = arith.constant {value = 1} : i32
  %c4 = arith.constant {value = 4} : i32
  %z = arith.constant {value = 0.0} : f32
  %r = scf.for %c0, %c4, %c1, %z : (i32, i32, i32, f32) -> f32 {
  ^bb0(%i: i32, %a: f32):
    %s = tile.load %x : (ptr<f32>) -> f32
    %a2 = arith.add %a, %s : f32
    scf.yield %a2 : f32
  }
  %w = scf.for %c0, %c4, %c1, %z : (i32, i32, i32, f32) -> f32 {
  ^bb0(%i2: i32, %b: f32):
    %t = tile.load %x : (ptr<f32>) -> f32
    tile.store %y, %t : ptr<f32>, f32
    %b2 = arith.add %b, %t : f32
    scf.yield %b2 : f32
  }
  tile.return %r, %w : f32, f32
}
// A load in a read-only loop that runs at least once is hoisted; with a store in the loop it stays.
// CHECK: %s = tile.load %x
// CHECK-NEXT: %r = scf.for
// CHECK: %w = scf.for
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %t = tile.load %x

// -----

tile.func @while_loop(%n: i32, %m: i32) -> (i32) {
  %c0 = arith.constant {value = 0} : i32
  %r = scf.while %c0 : (i32) -> i32 {
  ^bb0(%i: i32):
    %lim = arith.mul %n, %m : i32
    %go = arith.cmp %i, %lim {predicate = "lt"} : (i32, i32) -> i1
    scf.condition %go, %i : i1, i32
  } {
  ^bb1(%j: i32):
    %one = arith.constant {value = 1} : i32
    %j2 = arith.add %j, %one : i32
    scf.yield %j2 : i32
  }
  tile.return %r : i32
}
// CHECK: %lim = arith.mul %n, %m
// CHECK-NEXT: %one = arith.constant {value = 1}
// CHECK-NEXT: %r = scf.while
