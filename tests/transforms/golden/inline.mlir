// RUN: inline
// Inlining of tile.call: nested, multiple, in regions, recursion errors.

tile.func @add(%a: f32, %b: f32) -> (f32) {
  %s = arith.add %a, %b : f32
  tile.return %s : f32
}
tile.func @k(%x: f32, %y: f32, %p: ptr<f32>) attributes {kernel = true} {
  %r = tile.call %x, %y {callee = @add} : f32
  %r2 = tile.call %r, %r {callee = @add} : f32
  tile.store %p, %r2 : ptr<f32>, f32
  tile.return
}
// Two calls, each a fresh copy; the helper is erased, the kernel kept.
// CHECK-NOT: @add
// CHECK: tile.func @k(%x: f32, %y: f32, %p: ptr<f32>) attributes {kernel = true} {
// CHECK-NEXT: %s = arith.add %x, %y : f32
// CHECK-NEXT: %s_1 = arith.add %s, %s : f32
// CHECK-NEXT: tile.store %p, %s_1 : ptr<f32>, f32
// CHECK-NEXT: tile.return

// -----

tile.func @k(%x: i32) -> (i32) attributes {kernel = true} {
  %r = tile.call %x {callee = @outer} : i32
  tile.return %r : i32
}
tile.func @outer(%a: i32) -> (i32) {
  %t = tile.call %a {callee = @inner} : i32
  %u = arith.mul %t, %a : i32
  tile.return %u : i32
}
tile.func @inner(%b: i32) -> (i32) {
  %one = arith.constant {value = 1} : i32
  %v = arith.add %b, %one : i32
  tile.return %v : i32
}
// Callees calling callees are inlined transitively.
// CHECK: tile.func @k(%x: i32) -> (i32) attributes {kernel = true} {
// CHECK-NEXT: %one = arith.constant {value = 1} : i32
// CHECK-NEXT: %v = arith.add %x, %one : i32
// CHECK-NEXT: %u = arith.mul %v, %x : i32
// CHECK-NEXT: tile.return %u : i32
// CHECK-NEXT: }
// CHECK-NEXT: }

// -----

tile.func @pair(%a: i32) -> (i32, i32) {
  %n = arith.neg %a : i32
  tile.return %a, %n : i32, i32
}
tile.func @k(%x: i32, %c: i1, %t: tile<8xi32>) -> (i32, i32) attributes {kernel = true} {
  %r = scf.if %c : (i1) -> i32 {
    %p0, %p1 = tile.call %x {callee = @pair} : (i32) -> (i32, i32)
    scf.yield %p1 : i32
  } {
    scf.yield %x : i32
  }
  %s = tile.reduce %t {axis = 0} : (tile<8xi32>) -> i32 {
  ^bb0(%u: i32, %w: i32):
    %q0, %q1 = tile.call %u {callee = @pair} : (i32) -> (i32, i32)
    %m = arith.max %q1, %w : i32
    scf.yield %m : i32
  }
  tile.return %r, %s : i32, i32
}
// Calls inside scf regions and inside reduce combiners; multiple results.
// CHECK: %r = scf.if %c : (i1) -> i32 {
// CHECK-NEXT: %n = arith.neg %x : i32
// CHECK-NEXT: scf.yield %n : i32
// CHECK: ^bb0(%u: i32, %w: i32):
// CHECK-NEXT: %n_1 = arith.neg %u : i32
// CHECK-NEXT: %m = arith.max %n_1, %w : i32
// CHECK-NEXT: scf.yield %m : i32
// CHECK-NOT: tile.call

// -----

tile.func @helper_kernel(%a: i32) -> (i32) attributes {kernel = true} {
  tile.return %a : i32
}
tile.func @unused_helper(%a: i32) -> (i32) {
  tile.return %a : i32
}
tile.func @k(%x: i32) -> (i32) attributes {kernel = true} {
  %r = tile.call %x {callee = @helper_kernel} : i32
  tile.return %r : i32
}
// Called kernels stay; functions nobody called are left alone.
// CHECK: tile.func @helper_kernel
// CHECK: tile.func @unused_helper
// CHECK: tile.func @k(%x: i32) -> (i32) attributes {kernel = true} {
// CHECK-NEXT: tile.return %x : i32

// -----

tile.func @f(%a: i32) -> (i32) {
  %r = tile.call %a {callee = @g} : i32
  tile.return %r : i32
}
tile.func @g(%a: i32) -> (i32) {
  %r = tile.call %a {callee = @f} : i32
  tile.return %r : i32
}
tile.func @k(%x: i32) -> (i32) attributes {kernel = true} {
  %r = tile.call %x {callee = @f} : i32
  tile.return %r : i32
}
// CHECK-ERROR: recursive call cannot be inlined: @f -> @g -> @f

// -----

tile.func @self(%a: i32) -> (i32) {
  %r = tile.call %a {callee = @self} : i32
  tile.return %r : i32
}
// CHECK-ERROR: inline.mlir:115:8: error: recursive call cannot be inlined: @self -> @self
