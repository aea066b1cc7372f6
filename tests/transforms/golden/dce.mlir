// RUN: dce
// Dead-code elimination: unused pure ops and non-volatile loads go; effects stay.

tile.func @pure_chain(%x: i32) -> (i32) {
  %a = arith.add %x, %x : i32
  %b = arith.mul %a, %a : i32
  %c = arith.sub %b, %x : i32
  %keep = arith.neg %x : i32
  tile.return %keep : i32
}
// CHECK: tile.func @pure_chain
// CHECK-NEXT: %keep = arith.neg %x : i32
// CHECK-NEXT: tile.return %keep : i32

// -----

tile.func @effects_kept(%p: ptr<i32>, %x: i32, %m: i1) {
  tile.store %p, %x : ptr<i32>, i32
  %old = tile.atomic_rmw %p, %x {kind = "add"} : (ptr<i32>, i32) -> i32
  %cas = tile.atomic_cas %p, %x, %x : (ptr<i32>, i32, i32) -> i32
  tile.print %x {prefix = "x"} : i32
  tile.assert %m {message = "m"} : i1
  tile.return
}
// Stores, atomics (even with unused results), prints and asserts stay.
// CHECK: tile.store %p, %x
// CHECK-NEXT: %old = tile.atomic_rmw
// CHECK-NEXT: %cas = tile.atomic_cas
// CHECK-NEXT: tile.print %x
// CHECK-NEXT: tile.assert %m
// CHECK-NEXT: tile.return

// -----

tile.func @loads(%p: ptr<f32>) {
  %a = tile.load %p : (ptr<f32>) -> f32
  %v = tile.load %p {volatile = true} : (ptr<f32>) -> f32
  tile.return
}
// An unused load is dropped (as Triton does); a volatile one is kept.
// CHECK: tile.func @loads
// CHECK-NEXT: %v = tile.load %p {volatile = true}
// CHECK-NEXT: tile.return

// -----

tile.func @dead_structured_ops(%c: i1, %x: tile<8xf32>, %n: i32) {
  %r = scf.if %c : (i1) -> i32 {
    %a = arith.add %n, %n : i32
    scf.yield %a : i32
  } {
    scf.yield %n : i32
  }
  %s = tile.reduce %x {axis = 0} : (tile<8xf32>) -> f32 {
  ^bb0(%u: f32, %w: f32):
    %t = arith.add %u, %w : f32
    scf.yield %t : f32
  }
  %zero = arith.constant {value = 0} : i32
  %one = arith.constant {value = 1} : i32
  scf.for %zero, %n, %one : i32, i32, i32 {
  ^bb0(%i: i32):
    %sq = arith.mul %i, %i : i32
    scf.yield
  }
  tile.return
}
// An if, a reduce and a loop with pure bodies and unused results vanish.
// CHECK: tile.func @dead_structured_ops
// CHECK-NEXT: tile.return

// -----

tile.func @loop_with_store_kept(%n: i32, %p: ptr<i32>) {
  %zero = arith.constant {value = 0} : i32
  %one = arith.constant {value = 1} : i32
  scf.for %zero, %n, %one : i32, i32, i32 {
  ^bb0(%i: i32):
    %dead = arith.mul %i, %i : i32
    tile.store %p, %i : ptr<i32>, i32
    scf.yield
  }
  tile.return
}
// The loop stays (it stores); the dead op inside goes.
// CHECK: ^bb0(%i: i32):
// CHECK-NEXT: tile.store %p, %i
// CHECK-NEXT: scf.yield

// -----

tile.func @while_kept(%n: i32) {
  %zero = arith.constant {value = 0} : i32
  %r = scf.while %n : i32 {
  ^bb0(%j: i32):
    %go = arith.cmp %j, %zero {predicate = "gt"} : (i32, i32) -> i1
    scf.condition %go, %j : i1, i32
  } {
  ^bb0(%k: i32):
    scf.yield %k : i32
  }
  tile.return
}
// A while loop may not terminate: it is never removed.
// CHECK: %r = scf.while %n : i32 {
// CHECK: tile.return

// -----

tile.func @dead_loop_carried(%n: i32, %p: tile<4xptr<f32>>, %x: tile<4xf32>) -> (i32) {
  %zero = arith.constant {value = 0} : i32
  %one = arith.constant {value = 1} : i32
  %acc, %cnt = scf.for %zero, %n, %one, %x, %zero : (i32, i32, i32, tile<4xf32>, i32) -> (tile<4xf32>, i32) {
  ^bb0(%i: i32, %a: tile<4xf32>, %c: i32):
    %v = tile.load %p : (tile<4xptr<f32>>) -> tile<4xf32>
    %a2 = arith.add %a, %v : tile<4xf32>
    %c2 = arith.add %c, %one : i32
    tile.store %p, %x : tile<4xptr<f32>>, tile<4xf32>
    scf.yield %a2, %c2 : tile<4xf32>, i32
  }
  tile.return %cnt : i32
}
// %acc is never read after the loop and only feeds itself: it is dropped with
// its load; %cnt is returned and stays. The store keeps the loop alive.
// CHECK: %cnt = scf.for %zero, %n, %one, %zero : i32 {
// CHECK-NEXT: ^bb0(%i: i32, %c: i32):
// CHECK-NEXT: %c2 = arith.add %c, %one : i32
// CHECK-NEXT: tile.store %p, %x
// CHECK-NEXT: scf.yield %c2 : i32
// CHECK-NEXT: }
// CHECK-NEXT: tile.return %cnt : i32

// -----

tile.func @loop_carried_used_elsewhere_kept(%n: i32, %p: ptr<i32>) {
  %zero = arith.constant {value = 0} : i32
  %one = arith.constant {value = 1} : i32
  %r = scf.for %zero, %n, %one, %zero : i32 {
  ^bb0(%i: i32, %c: i32):
    %c2 = arith.add %c, %one : i32
    tile.store %p, %c : ptr<i32>, i32
    scf.yield %c2 : i32
  }
  tile.return
}
// The carried value is stored each iteration: it stays although the result is unused.
// CHECK: %r = scf.for %zero, %n, %one, %zero : i32 {
// CHECK-NEXT: ^bb0(%i: i32, %c: i32):
// CHECK-NEXT: %c2 = arith.add %c, %one : i32
// CHECK-NEXT: tile.store %p, %c

// -----

tile.func @unused_if_result(%c: i1, %p: ptr<i32>, %x: i32) -> (i32) {
  %a, %b = scf.if %c : (i1) -> (i32, i32) {
    %m = arith.mul %x, %x : i32
    tile.store %p, %x : ptr<i32>, i32
    scf.yield %m, %x : i32, i32
  } {
    scf.yield %x, %x : i32, i32
  }
  tile.return %b : i32
}
// The unused first result is removed from both branches, then its computation.
// CHECK: %b = scf.if %c : (i1) -> i32 {
// CHECK-NEXT: tile.store %p, %x
// CHECK-NEXT: scf.yield %x : i32
// CHECK-NEXT: } {
// CHECK-NEXT: scf.yield %x : i32
