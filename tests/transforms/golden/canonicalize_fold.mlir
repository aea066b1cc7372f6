// RUN: canonicalize
// Constant folding: every operand constant -> one arith.constant, exact semantics.

tile.func @add_wraps() -> (i8) {
  %a = arith.constant {value = 100} : i8
  %b = arith.constant {value = 100} : i8
  %r = arith.add %a, %b : i8
  tile.return %r : i8
}
// CHECK: tile.func @add_wraps() -> (i8) {
// CHECK-NEXT: %r = arith.constant {value = -56} : i8
// CHECK-NEXT: tile.return %r : i8

// -----

tile.func @div_truncates() -> (i32, i32, u32) {
  %a = arith.constant {value = -7} : i32
  %b = arith.constant {value = 2} : i32
  %q = arith.div %a, %b : i32
  %r = arith.rem %a, %b : i32
  %x = arith.constant {value = 4294967289} : u32
  %y = arith.constant {value = 2} : u32
  %u = arith.div %x, %y : u32
  tile.return %q, %r, %u : i32, i32, u32
}
// CHECK: %q = arith.constant {value = -3} : i32
// CHECK-NEXT: %r = arith.constant {value = -1} : i32
// CHECK-NEXT: %u = arith.constant {value = 2147483644} : u32

// -----

tile.func @no_fold_div_by_zero() -> (i32, i32) {
  %a = arith.constant {value = 7} : i32
  %z = arith.constant {value = 0} : i32
  %q = arith.div %a, %z : i32
  %r = arith.rem %a, %z : i32
  tile.return %q, %r : i32, i32
}
// CHECK: %q = arith.div %a, %z : i32
// CHECK-NEXT: %r = arith.rem %a, %z : i32

// -----

tile.func @no_fold_int_min_div_minus_one() -> (i8) {
  %a = arith.constant {value = -128} : i8
  %b = arith.constant {value = -1} : i8
  %q = arith.div %a, %b : i8
  tile.return %q : i8
}
// CHECK: %q = arith.div %a, %b : i8

// -----

tile.func @shifts() -> (i8, u8, i8) {
  %a = arith.constant {value = -16} : i8
  %s = arith.constant {value = 2} : i8
  %r = arith.shr %a, %s : i8
  %ua = arith.constant {value = 240} : u8
  %us = arith.constant {value = 2} : u8
  %ur = arith.shr %ua, %us : u8
  %big = arith.constant {value = 8} : i8
  %bad = arith.shl %a, %big : i8
  tile.return %r, %ur, %bad : i8, u8, i8
}
// CHECK: %r = arith.constant {value = -4} : i8
// CHECK: %ur = arith.constant {value = 60} : u8
// CHECK: %bad = arith.shl %a, %big : i8

// -----

tile.func @float32_rounding() -> (f32) {
  %a = arith.constant {value = 0.1} : f32
  %b = arith.constant {value = 0.2} : f32
  %r = arith.add %a, %b : f32
  tile.return %r : f32
}
// f32(0.1) + f32(0.2) rounded to f32, not the f64 sum 0.30000000000000004
// CHECK: %r = arith.constant {value = 0.30000001192092896} : f32

// -----

tile.func @cmp_nan() -> (i1, i1, i1) {
  %n = arith.constant {value = nan} : f32
  %one = arith.constant {value = 1.0} : f32
  %eq = arith.cmp %n, %one {predicate = "eq"} : (f32, f32) -> i1
  %ne = arith.cmp %n, %one {predicate = "ne"} : (f32, f32) -> i1
  %lt = arith.cmp %n, %one {predicate = "lt"} : (f32, f32) -> i1
  tile.return %eq, %ne, %lt : i1, i1, i1
}
// CHECK: %eq = arith.constant {value = false} : i1
// CHECK-NEXT: %ne = arith.constant {value = true} : i1
// CHECK-NEXT: %lt = arith.constant {value = false} : i1

// -----

tile.func @cmp_unsigned() -> (i1) {
  %a = arith.constant {value = 255} : u8
  %b = arith.constant {value = 1} : u8
  %gt = arith.cmp %a, %b {predicate = "gt"} : (u8, u8) -> i1
  tile.return %gt : i1
}
// CHECK: %gt = arith.constant {value = true} : i1

// -----

tile.func @casts() -> (i32, i8, u8, i1, f32, f32) {
  %f = arith.constant {value = -2.75} : f32
  %t = arith.cast %f : (f32) -> i32
  %i = arith.constant {value = 300} : i32
  %n = arith.cast %i : (i32) -> i8
  %m = arith.constant {value = -1} : i8
  %z = arith.cast %m : (i8) -> u8
  %b = arith.cast %f : (f32) -> i1
  %big = arith.constant {value = 16777217} : i32
  %fb = arith.cast %big : (i32) -> f32
  %tru = arith.constant {value = true} : i1
  %one = arith.cast %tru : (i1) -> f32
  tile.return %t, %n, %z, %b, %fb, %one : i32, i8, u8, i1, f32, f32
}
// CHECK: %t = arith.constant {value = -2} : i32
// CHECK-NEXT: %n = arith.constant {value = 44} : i8
// CHECK-NEXT: %z = arith.constant {value = 255} : u8
// CHECK-NEXT: %b = arith.constant {value = true} : i1
// CHECK-NEXT: %fb = arith.constant {value = 16777216.0} : f32
// CHECK-NEXT: %one = arith.constant {value = 1.0} : f32

// -----

tile.func @no_fold_out_of_range_cast() -> (i8, i32) {
  %f = arith.constant {value = 300.0} : f32
  %t = arith.cast %f : (f32) -> i8
  %n = arith.constant {value = nan} : f32
  %u = arith.cast %n : (f32) -> i32
  tile.return %t, %u : i8, i32
}
// CHECK: %t = arith.cast %f : (f32) -> i8
// CHECK: %u = arith.cast %n : (f32) -> i32

// -----

tile.func @splat_broadcast_tiles() -> (tile<4x8xf32>) {
  %c = arith.constant {value = 2.0} : f32
  %s = tile.splat %c : (f32) -> tile<1x8xf32>
  %b = tile.broadcast %s : (tile<1x8xf32>) -> tile<4x8xf32>
  %t = arith.constant {value = 3.0} : tile<4x8xf32>
  %m = arith.mul %b, %t : tile<4x8xf32>
  tile.return %m : tile<4x8xf32>
}
// CHECK: %m = arith.constant {value = 6.0} : tile<4x8xf32>
// CHECK-NEXT: tile.return %m : tile<4x8xf32>

// -----

tile.func @select_and_minmax() -> (i32, f32, f32) {
  %t = arith.constant {value = true} : i1
  %a = arith.constant {value = 5} : i32
  %b = arith.constant {value = 9} : i32
  %s = arith.select %t, %a, %b : (i1, i32, i32) -> i32
  %n = arith.constant {value = nan} : f32
  %one = arith.constant {value = 1.0} : f32
  %mx = arith.max %n, %one : f32
  %mp = arith.max %n, %one {propagate_nan = true} : f32
  tile.return %s, %mx, %mp : i32, f32, f32
}
// CHECK: %s = arith.constant {value = 5} : i32
// CHECK: %mx = arith.constant {value = 1.0} : f32
// CHECK: %mp = arith.constant {value = nan} : f32

// -----

tile.func @math_ops() -> (f32, i32, f32, u32) {
  %x = arith.constant {value = 2.0} : f32
  %r = math.sqrt %x : f32
  %m = arith.constant {value = -2147483648} : i32
  %a = math.abs %m : i32
  %f = arith.constant {value = -1.5} : f32
  %fl = math.floor %f : f32
  %u = arith.constant {value = 4294967295} : u32
  %h = math.umulhi %u, %u : u32
  tile.return %r, %a, %fl, %h : f32, i32, f32, u32
}
// CHECK: %r = arith.constant {value = 1.4142135381698608} : f32
// CHECK-NEXT: %a = arith.constant {value = -2147483648} : i32
// CHECK-NEXT: %fl = arith.constant {value = -2.0} : f32
// CHECK-NEXT: %h = arith.constant {value = 4294967294} : u32
