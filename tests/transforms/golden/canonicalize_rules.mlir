// RUN: canonicalize
// One case per algebraic rule of kdsl/transforms/simplify.py (and the non-rules).

tile.func @int_identities(%x: i32) -> (i32, i32, i32, i32, i32, i32, i32, i32) {
  %c0 = arith.constant {value = 0} : i32
  %c1 = arith.constant {value = 1} : i32
  %a = arith.add %x, %c0 : i32
  %b = arith.add %c0, %x : i32
  %c = arith.sub %x, %c0 : i32
  %d = arith.mul %x, %c1 : i32
  %e = arith.mul %c1, %x : i32
  %f = arith.div %x, %c1 : i32
  %g = arith.shl %x, %c0 : i32
  %h = arith.shr %x, %c0 : i32
  tile.return %a, %b, %c, %d, %e, %f, %g, %h : i32, i32, i32, i32, i32, i32, i32, i32
}
// x+0, 0+x, x-0, x*1, 1*x, x/1, x<<0, x>>0 -> x
// CHECK: tile.func @int_identities(%x: i32)
// CHECK-NEXT: tile.return %x, %x, %x, %x, %x, %x, %x, %x : i32, i32, i32, i32, i32, i32, i32, i32

// -----

tile.func @int_to_zero(%x: i32) -> (i32, i32, i32, i32) {
  %c0 = arith.constant {value = 0} : i32
  %c1 = arith.constant {value = 1} : i32
  %a = arith.mul %x, %c0 : i32
  %b = arith.sub %x, %x : i32
  %c = arith.rem %x, %c1 : i32
  %d = arith.xor %x, %x : i32
  tile.return %a, %b, %c, %d : i32, i32, i32, i32
}
// x*0, x-x, x%1, x^x -> 0 (x*0 reuses the zero constant)
// CHECK: %c0 = arith.constant {value = 0} : i32
// CHECK-NEXT: %b = arith.constant {value = 0} : i32
// CHECK-NEXT: %c = arith.constant {value = 0} : i32
// CHECK-NEXT: %d = arith.constant {value = 0} : i32
// CHECK-NEXT: tile.return %c0, %b, %c, %d

// -----

tile.func @bitwise(%x: u8) -> (u8, u8, u8, u8, u8, u8, u8, u8) {
  %c0 = arith.constant {value = 0} : u8
  %ones = arith.constant {value = 255} : u8
  %a = arith.and %x, %c0 : u8
  %b = arith.and %x, %ones : u8
  %c = arith.and %x, %x : u8
  %d = arith.or %x, %c0 : u8
  %e = arith.or %x, %ones : u8
  %f = arith.or %x, %x : u8
  %g = arith.xor %x, %c0 : u8
  %h = arith.xor %c0, %x : u8
  tile.return %a, %b, %c, %d, %e, %f, %g, %h : u8, u8, u8, u8, u8, u8, u8, u8
}
// x&0 -> 0, x&-1 -> x, x&x -> x, x|0 -> x, x|-1 -> -1, x|x -> x, x^0 -> x, 0^x -> x
// CHECK: tile.func @bitwise
// CHECK-NEXT: %c0 = arith.constant {value = 0} : u8
// CHECK-NEXT: %ones = arith.constant {value = 255} : u8
// CHECK-NEXT: tile.return %c0, %x, %x, %x, %ones, %x, %x, %x

// -----

tile.func @float_rules(%x: f32) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
  %p0 = arith.constant {value = 0.0} : f32
  %n0 = arith.constant {value = -0.0} : f32
  %one = arith.constant {value = 1.0} : f32
  %a = arith.add %x, %n0 : f32
  %b = arith.add %x, %p0 : f32
  %c = arith.sub %x, %p0 : f32
  %d = arith.mul %x, %one : f32
  %e = arith.mul %x, %p0 : f32
  %f = arith.div %x, %one : f32
  %g = arith.sub %x, %x : f32
  %h = arith.mul %one, %x : f32
  tile.return %a, %b, %c, %d, %e, %f, %g, %h : f32, f32, f32, f32, f32, f32, f32, f32
}
// Exact: x+(-0.0), x-0.0, x*1.0, x/1.0, 1.0*x. Not exact (kept): x+0.0, x*0.0, x-x.
// CHECK: %b = arith.add %x, %p0 : f32
// CHECK-NEXT: %e = arith.mul %x, %p0 : f32
// CHECK-NEXT: %g = arith.sub %x, %x : f32
// CHECK-NEXT: tile.return %x, %b, %x, %x, %e, %x, %g, %x

// -----

tile.func @same_operands(%x: i32, %y: f32) -> (i32, i32, f32, i1, i1, i1, i1) {
  %a = arith.max %x, %x : i32
  %b = arith.min %x, %x : i32
  %c = arith.max %y, %y : f32
  %eq = arith.cmp %x, %x {predicate = "eq"} : (i32, i32) -> i1
  %le = arith.cmp %x, %x {predicate = "le"} : (i32, i32) -> i1
  %lt = arith.cmp %x, %x {predicate = "lt"} : (i32, i32) -> i1
  %feq = arith.cmp %y, %y {predicate = "eq"} : (f32, f32) -> i1
  tile.return %a, %b, %c, %eq, %le, %lt, %feq : i32, i32, f32, i1, i1, i1, i1
}
// max(x,x), min(x,x) -> x; x==x, x<=x -> true; x<x -> false (ints only: NaN != NaN)
// CHECK: %eq = arith.constant {value = true} : i1
// CHECK-NEXT: %le = arith.constant {value = true} : i1
// CHECK-NEXT: %lt = arith.constant {value = false} : i1
// CHECK-NEXT: %feq = arith.cmp %y, %y {predicate = "eq"} : (f32, f32) -> i1
// CHECK-NEXT: tile.return %x, %x, %y, %eq, %le, %lt, %feq

// -----

tile.func @select_rules(%c: i1, %a: i32, %b: i32) -> (i32, i32, i32, i1) {
  %t = arith.constant {value = true} : i1
  %f = arith.constant {value = false} : i1
  %s1 = arith.select %t, %a, %b : (i1, i32, i32) -> i32
  %s2 = arith.select %f, %a, %b : (i1, i32, i32) -> i32
  %s3 = arith.select %c, %a, %a : (i1, i32, i32) -> i32
  %s4 = arith.select %c, %t, %f : (i1, i1, i1) -> i1
  tile.return %s1, %s2, %s3, %s4 : i32, i32, i32, i1
}
// select(true,a,b) -> a; select(false,a,b) -> b; select(c,a,a) -> a; select(c,true,false) -> c
// CHECK: tile.func @select_rules
// CHECK-NEXT: tile.return %a, %b, %a, %c : i32, i32, i32, i1

// -----

tile.func @select_tile_cond(%a: tile<8xi32>, %b: tile<8xi32>) -> (tile<8xi32>) {
  %f = arith.constant {value = false} : tile<8xi1>
  %s = arith.select %f, %a, %b : (tile<8xi1>, tile<8xi32>, tile<8xi32>) -> tile<8xi32>
  tile.return %s : tile<8xi32>
}
// CHECK: tile.return %b : tile<8xi32>

// -----

tile.func @unary_chains(%x: i32, %y: f32) -> (i32, f32, i32, f32, i32) {
  %n1 = arith.neg %x : i32
  %n2 = arith.neg %n1 : i32
  %m1 = arith.neg %y : f32
  %m2 = arith.neg %m1 : f32
  %c = arith.cast %x : (i32) -> i32
  %bc = arith.bitcast %y : (f32) -> f32
  %a1 = math.abs %x : i32
  %a2 = math.abs %a1 : i32
  tile.return %n2, %m2, %c, %bc, %a2 : i32, f32, i32, f32, i32
}
// -(-x) -> x, cast/bitcast to the same type -> x, abs(abs(x)) -> abs(x)
// CHECK: %a1 = math.abs %x : i32
// CHECK-NEXT: tile.return %x, %y, %x, %y, %a1

// -----

tile.func @constants_to_the_right(%x: i32, %y: i32) -> (i32, i32, i32) {
  %c = arith.constant {value = 5} : i32
  %a = arith.add %c, %x : i32
  %m = arith.mul %c, %y : i32
  %s = arith.sub %c, %x : i32
  tile.return %a, %m, %s : i32, i32, i32
}
// Commutative ops put the constant on the right; sub is not commutative.
// CHECK: %a = arith.add %x, %c : i32
// CHECK-NEXT: %m = arith.mul %y, %c : i32
// CHECK-NEXT: %s = arith.sub %c, %x : i32

// -----

tile.func @addptr_zero(%p: tile<16xptr<f32>>, %q: ptr<f32>) -> (tile<16xptr<f32>>, ptr<f32>) {
  %z = arith.constant {value = 0} : tile<16xi32>
  %a = tile.addptr %p, %z : (tile<16xptr<f32>>, tile<16xi32>) -> tile<16xptr<f32>>
  %z64 = arith.constant {value = 0} : i64
  %b = tile.addptr %q, %z64 : (ptr<f32>, i64) -> ptr<f32>
  tile.return %a, %b : tile<16xptr<f32>>, ptr<f32>
}
// addptr p, 0 -> p
// CHECK: tile.func @addptr_zero
// CHECK-NEXT: tile.return %p, %q

// -----

tile.func @broadcast_rules(%x: tile<1x8xf32>, %s: f32, %y: tile<4x8xf32>) -> (tile<4x8xf32>, tile<2x4x8xf32>, tile<4x8xf32>) {
  %same = tile.broadcast %y : (tile<4x8xf32>) -> tile<4x8xf32>
  %e = tile.expand_dims %x {axis = 0} : (tile<1x8xf32>) -> tile<1x1x8xf32>
  %b1 = tile.broadcast %e : (tile<1x1x8xf32>) -> tile<1x4x8xf32>
  %b1r = tile.reshape %b1 : (tile<1x4x8xf32>) -> tile<1x4x8xf32>
  %b2 = tile.broadcast %b1r : (tile<1x4x8xf32>) -> tile<2x4x8xf32>
  %sp = tile.splat %s : (f32) -> tile<1x8xf32>
  %b3 = tile.broadcast %sp : (tile<1x8xf32>) -> tile<4x8xf32>
  tile.return %same, %b2, %b3 : tile<4x8xf32>, tile<2x4x8xf32>, tile<4x8xf32>
}
// broadcast to the same type -> x; reshape to the same type -> x;
// broadcast(broadcast(x)) -> broadcast(x); broadcast(splat(s)) -> splat(s)
// CHECK: %e = tile.expand_dims %x {axis = 0} : (tile<1x8xf32>) -> tile<1x1x8xf32>
// CHECK-NEXT: %b2 = tile.broadcast %e : (tile<1x1x8xf32>) -> tile<2x4x8xf32>
// CHECK-NEXT: %b3 = tile.splat %s : (f32) -> tile<4x8xf32>
// CHECK-NEXT: tile.return %y, %b2, %b3

// -----

tile.func @reshape_chains(%x: tile<4x8xi32>, %s: i32) -> (tile<32xi32>, tile<4x8xi32>, tile<1x32xi32>, tile<2x16xi32>, tile<32x1xi32>) {
  %r1 = tile.reshape %x : (tile<4x8xi32>) -> tile<2x16xi32>
  %r2 = tile.reshape %r1 : (tile<2x16xi32>) -> tile<32xi32>
  %e = tile.expand_dims %x {axis = 1} : (tile<4x8xi32>) -> tile<4x1x8xi32>
  %back = tile.reshape %e : (tile<4x1x8xi32>) -> tile<4x8xi32>
  %e2 = tile.expand_dims %r2 {axis = 0} : (tile<32xi32>) -> tile<1x32xi32>
  %sp = tile.splat %s : (i32) -> tile<32xi32>
  %rs = tile.reshape %sp : (tile<32xi32>) -> tile<2x16xi32>
  %se = tile.expand_dims %sp {axis = 1} : (tile<32xi32>) -> tile<32x1xi32>
  tile.return %r2, %back, %e2, %rs, %se : tile<32xi32>, tile<4x8xi32>, tile<1x32xi32>, tile<2x16xi32>, tile<32x1xi32>
}
// reshape(reshape(x)) -> reshape(x); reshape(expand_dims(x)) -> reshape(x) (-> x when the type is x's);
// expand_dims(reshape(x)) -> reshape(x); reshape/expand_dims of splat(s) -> splat(s)
// CHECK: %r2 = tile.reshape %x : (tile<4x8xi32>) -> tile<32xi32>
// CHECK-NEXT: %e2 = tile.reshape %x : (tile<4x8xi32>) -> tile<1x32xi32>
// CHECK-NEXT: %rs = tile.splat %s : (i32) -> tile<2x16xi32>
// CHECK-NEXT: %se = tile.splat %s : (i32) -> tile<32x1xi32>
// CHECK-NEXT: tile.return %r2, %x, %e2, %rs, %se

// -----

tile.func @permute_rules(%x: tile<2x4x8xf16>, %s: f16) -> (tile<2x4x8xf16>, tile<8x2x4xf16>, tile<4x2xf16>) {
  %id = tile.permute %x {order = (0, 1, 2)} : (tile<2x4x8xf16>) -> tile<2x4x8xf16>
  %p1 = tile.permute %x {order = (1, 2, 0)} : (tile<2x4x8xf16>) -> tile<4x8x2xf16>
  %p2 = tile.permute %p1 {order = (1, 2, 0)} : (tile<4x8x2xf16>) -> tile<8x2x4xf16>
  %sp = tile.splat %s : (f16) -> tile<2x4xf16>
  %ps = tile.permute %sp {order = (1, 0)} : (tile<2x4xf16>) -> tile<4x2xf16>
  tile.return %id, %p2, %ps : tile<2x4x8xf16>, tile<8x2x4xf16>, tile<4x2xf16>
}
// permute identity -> x; permute(permute(x)) -> one permute; permute(splat(s)) -> splat(s)
// CHECK: %p2 = tile.permute %x {order = (2, 0, 1)} : (tile<2x4x8xf16>) -> tile<8x2x4xf16>
// CHECK-NEXT: %ps = tile.splat %s : (f16) -> tile<4x2xf16>
// CHECK-NEXT: tile.return %x, %p2, %ps

// -----

tile.func @arange_single() -> (tile<1xi32>) {
  %a = tile.arange {end = 6, start = 5} : tile<1xi32>
  tile.return %a : tile<1xi32>
}
// CHECK: %a = arith.constant {value = 5} : tile<1xi32>

// -----

tile.func @dead_pure_ops_removed(%x: i32, %p: ptr<i32>) {
  %a = arith.add %x, %x : i32
  %b = arith.mul %a, %a : i32
  tile.store %p, %x : ptr<i32>, i32
  tile.return
}
// CHECK: tile.func @dead_pure_ops_removed
// CHECK-NEXT: tile.store %p, %x : ptr<i32>, i32
// CHECK-NEXT: tile.return
