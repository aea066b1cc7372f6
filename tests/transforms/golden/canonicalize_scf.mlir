// RUN: canonicalize
// Control flow: constant scf.if conditions, zero-trip scf.for, folding inside regions.

tile.func @if_true(%x: i32, %p: ptr<i32>) -> (i32) {
  %t = arith.constant {value = true} : i1
  %r = scf.if %t : (i1) -> i32 {
    %a = arith.mul %x, %x : i32
    tile.store %p, %a : ptr<i32>, i32
    scf.yield %a : i32
  } {
    scf.yield %x : i32
  }
  tile.return %r : i32
}
// The then-region is inlined (its store included); the else-region disappears.
// CHECK: tile.func @if_true
// CHECK-NEXT: %a = arith.mul %x, %x : i32
// CHECK-NEXT: tile.store %p, %a : ptr<i32>, i32
// CHECK-NEXT: tile.return %a : i32

// -----

tile.func @if_false(%x: i32, %p: ptr<i32>) -> (i32) {
  %f = arith.constant {value = false} : i1
  %r = scf.if %f : (i1) -> i32 {
    tile.store %p, %x : ptr<i32>, i32
    scf.yield %x : i32
  } {
    %c = arith.constant {value = 7} : i32
    scf.yield %c : i32
  }
  tile.return %r : i32
}
// CHECK: tile.func @if_false
// CHECK-NEXT: %c = arith.constant {value = 7} : i32
// CHECK-NEXT: tile.return %c : i32
// CHECK-NOT: tile.store

// -----

tile.func @if_folded_condition(%x: i32) -> (i32) {
  %a = arith.constant {value = 3} : i32
  %b = arith.constant {value = 4} : i32
  %lt = arith.cmp %a, %b {predicate = "lt"} : (i32, i32) -> i1
  %r = scf.if %lt : (i1) -> i32 {
    scf.yield %a : i32
  } {
    scf.yield %b : i32
  }
  tile.return %r : i32
}
// cmp of two constants folds, then the if goes.
// CHECK: tile.func @if_folded_condition
// CHECK-NEXT: %a = arith.constant {value = 3} : i32
// CHECK-NEXT: tile.return %a : i32

// -----

tile.func @if_without_results(%p: ptr<i32>, %x: i32) {
  %t = arith.constant {value = true} : i1
  scf.if %t : i1 {
    tile.store %p, %x : ptr<i32>, i32
    scf.yield
  } {
    scf.yield
  }
  tile.return
}
// CHECK: tile.func @if_without_results
// CHECK-NEXT: tile.store %p, %x : ptr<i32>, i32
// CHECK-NEXT: tile.return

// -----

tile.func @for_zero_trips(%x: f32, %p: ptr<f32>) -> (f32, f32) {
  %lb = arith.constant {value = 10} : i32
  %ub = arith.constant {value = 10} : i32
  %step = arith.constant {value = 1} : i32
  %r = scf.for %lb, %ub, %step, %x : (i32, i32, i32, f32) -> f32 {
  ^bb0(%i: i32, %acc: f32):
    tile.store %p, %acc : ptr<f32>, f32
    scf.yield %acc : f32
  }
  %neg = arith.constant {value = -1} : i32
  %lo = arith.constant {value = 0} : i32
  %r2 = scf.for %lo, %lb, %neg, %x : (i32, i32, i32, f32) -> f32 {
  ^bb0(%j: i32, %acc2: f32):
    %d = arith.add %acc2, %acc2 : f32
    scf.yield %d : f32
  }
  tile.return %r, %r2 : f32, f32
}
// for i in range(10, 10) and range(0, 10, -1) run zero times: results are the inits.
// CHECK: tile.func @for_zero_trips
// CHECK-NEXT: tile.return %x, %x : f32, f32

// -----

tile.func @for_that_runs_stays(%x: f32) -> (f32) {
  %lb = arith.constant {value = 0} : i32
  %ub = arith.constant {value = 4} : i32
  %step = arith.constant {value = 1} : i32
  %r = scf.for %lb, %ub, %step, %x : (i32, i32, i32, f32) -> f32 {
  ^bb0(%i: i32, %acc: f32):
    %z = arith.constant {value = -0.0} : f32
    %a = arith.add %acc, %z : f32
    scf.yield %a : f32
  }
  tile.return %r : f32
}
// The loop stays; rules apply inside its body (acc + -0.0 -> acc).
// CHECK: %r = scf.for %lb, %ub, %step, %x : (i32, i32, i32, f32) -> f32 {
// CHECK-NEXT: ^bb0(%i: i32, %acc: f32):
// CHECK-NEXT: scf.yield %acc : f32
// CHECK-NEXT: }
// CHECK-NEXT: tile.return %r : f32

// -----

tile.func @nested_if_in_for(%n: i32, %p: ptr<i32>) {
  %lb = arith.constant {value = 0} : i32
  %step = arith.constant {value = 1} : i32
  scf.for %lb, %n, %step : i32, i32, i32 {
  ^bb0(%i: i32):
    %f = arith.constant {value = false} : i1
    scf.if %f : i1 {
      tile.store %p, %i : ptr<i32>, i32
      scf.yield
    } {
      scf.yield
    }
    scf.yield
  }
  tile.return
}
// The dead store inside the constant-false if disappears; the (now empty) loop stays
// for DCE to judge.
// CHECK: scf.for %lb, %n, %step : i32, i32, i32 {
// CHECK-NEXT: ^bb0(%i: i32):
// CHECK-NEXT: scf.yield
// CHECK-NOT: tile.store

// -----

tile.func @for_invariant_iter_arg(%n: i32, %s: i32) -> (i32) {
  %lb = arith.constant {value = 0} : i32
  %step = arith.constant {value = 1} : i32
  %r, %t = scf.for %lb, %n, %step, %s, %lb : (i32, i32, i32, i32, i32) -> (i32, i32) {
  ^bb0(%i: i32, %stride: i32, %acc: i32):
    %m = arith.mul %i, %stride : i32
    %a = arith.add %acc, %m : i32
    scf.yield %stride, %a : i32, i32
  }
  %u = arith.add %r, %t : i32
  tile.return %u : i32
}
// %stride is yielded unchanged: inside and after the loop it is its init %s (dce drops the slot).
// CHECK: ^bb0(%i: i32, %stride: i32, %acc: i32):
// CHECK-NEXT: %m = arith.mul %i, %s : i32
// CHECK: scf.yield %s, %a : i32, i32
// CHECK: %u = arith.add %s, %t : i32

// -----

tile.func @while_invariant_arg(%n: i32, %s: i32) -> (i32) {
  %z = arith.constant {value = 0} : i32
  %r, %t = scf.while %s, %z : (i32, i32) -> (i32, i32) {
  ^bb0(%stride: i32, %i: i32):
    %c = arith.cmp %i, %n {predicate = "lt"} : (i32, i32) -> i1
    scf.condition %c, %stride, %i : i1, i32, i32
  } {
  ^bb0(%stride2: i32, %j: i32):
    %k = arith.add %j, %stride2 : i32
    scf.yield %stride2, %k : i32, i32
  }
  %u = arith.add %r, %t : i32
  tile.return %u : i32
}
// %stride is passed on unchanged: both regions and the result read the init %s.
// CHECK: scf.condition %c, %s, %i : i1, i32, i32
// CHECK: %k = arith.add %j, %s : i32
// CHECK-NEXT: scf.yield %s, %k : i32, i32
// CHECK: %u = arith.add %s, %t : i32
