// RUN: cse
// Common-subexpression elimination of pure ops, scoped by regions.

tile.func @basic(%x: i32, %y: i32) -> (i32, i32, i32, i32) {
  %a = arith.add %x, %y : i32
  %b = arith.add %x, %y : i32
  %c = arith.add %y, %x : i32
  %c1 = arith.constant {value = 1} : i32
  %c2 = arith.constant {value = 1} : i32
  %d = arith.mul %b, %c2 : i32
  %e = arith.mul %a, %c1 : i32
  tile.return %a, %c, %d, %e : i32, i32, i32, i32
}
// Same name, operands, attributes and types -> one op; operand order matters;
// the second mul becomes identical once its operands were merged.
// CHECK: %a = arith.add %x, %y : i32
// CHECK-NEXT: %c = arith.add %y, %x : i32
// CHECK-NEXT: %c1 = arith.constant {value = 1} : i32
// CHECK-NEXT: %d = arith.mul %a, %c1 : i32
// CHECK-NEXT: tile.return %a, %c, %d, %d : i32, i32, i32, i32

// -----

tile.func @attributes_and_types(%x: f32) -> (i1, i1, f32, f32, f64, i32, i32) {
  %lt = arith.cmp %x, %x {predicate = "lt"} : (f32, f32) -> i1
  %gt = arith.cmp %x, %x {predicate = "gt"} : (f32, f32) -> i1
  %z = arith.constant {value = 0.0} : f32
  %nz = arith.constant {value = -0.0} : f32
  %zd = arith.constant {value = 0.0} : f64
  %i = arith.constant {value = 0} : i32
  %j = arith.constant {value = 0} : i32
  tile.return %lt, %gt, %z, %nz, %zd, %i, %j : i1, i1, f32, f32, f64, i32, i32
}
// Different predicates, 0.0 vs -0.0, f32 vs f64 stay apart.
// CHECK: %lt = arith.cmp
// CHECK-NEXT: %gt = arith.cmp
// CHECK-NEXT: %z = arith.constant {value = 0.0} : f32
// CHECK-NEXT: %nz = arith.constant {value = -0.0} : f32
// CHECK-NEXT: %zd = arith.constant {value = 0.0} : f64
// CHECK-NEXT: %i = arith.constant {value = 0} : i32
// CHECK-NEXT: tile.return %lt, %gt, %z, %nz, %zd, %i, %i

// -----

tile.func @nan_constants() -> (f32, f32) {
  %a = arith.constant {value = nan} : f32
  %b = arith.constant {value = nan} : f32
  tile.return %a, %b : f32, f32
}
// nan != nan in Python, but the two constants are the same value.
// CHECK: %a = arith.constant {value = nan} : f32
// CHECK-NEXT: tile.return %a, %a : f32, f32

// -----

tile.func @effects_not_merged(%p: ptr<f32>) -> (f32, f32) {
  %a = tile.load %p : (ptr<f32>) -> f32
  %b = tile.load %p : (ptr<f32>) -> f32
  %pid = tile.program_id {axis = 0} : i32
  %pid2 = tile.program_id {axis = 0} : i32
  tile.store %p, %a : ptr<f32>, f32
  tile.print %pid, %pid2 {prefix = ""} : i32, i32
  tile.return %a, %b : f32, f32
}
// Loads are not pure: two loads stay two loads. program_id is pure.
// CHECK: %a = tile.load %p
// CHECK-NEXT: %b = tile.load %p
// CHECK-NEXT: %pid = tile.program_id {axis = 0} : i32
// CHECK-NEXT: tile.store %p, %a
// CHECK-NEXT: tile.print %pid, %pid {prefix = ""} : i32, i32

// -----

tile.func @outer_reused_inside(%x: i32, %c: i1) -> (i32) {
  %a = arith.add %x, %x : i32
  %r = scf.if %c : (i1) -> i32 {
    %b = arith.add %x, %x : i32
    scf.yield %b : i32
  } {
    scf.yield %x : i32
  }
  tile.return %r : i32
}
// A value computed before the region is available inside it.
// CHECK: %a = arith.add %x, %x : i32
// CHECK-NEXT: %r = scf.if %c : (i1) -> i32 {
// CHECK-NEXT: scf.yield %a : i32

// -----

tile.func @inner_not_reused_outside(%x: i32, %c: i1) -> (i32, i32) {
  %r = scf.if %c : (i1) -> i32 {
    %b = arith.mul %x, %x : i32
    scf.yield %b : i32
  } {
    %b2 = arith.mul %x, %x : i32
    scf.yield %b2 : i32
  }
  %a = arith.mul %x, %x : i32
  tile.return %r, %a : i32, i32
}
// A value computed inside a region does not dominate code after it, nor the sibling region.
// CHECK: %b = arith.mul %x, %x : i32
// CHECK-NEXT: scf.yield %b : i32
// CHECK: %b2 = arith.mul %x, %x : i32
// CHECK-NEXT: scf.yield %b2 : i32
// CHECK: %a = arith.mul %x, %x : i32
// CHECK-NEXT: tile.return %r, %a

// -----

tile.func @loop_body(%n: i32, %x: i32) -> (i32) {
  %zero = arith.constant {value = 0} : i32
  %one = arith.constant {value = 1} : i32
  %r = scf.for %zero, %n, %one, %x : (i32, i32, i32, i32) -> i32 {
  ^bb0(%i: i32, %acc: i32):
    %one2 = arith.constant {value = 1} : i32
    %t1 = arith.add %acc, %i : i32
    %t2 = arith.add %acc, %i : i32
    %s = arith.add %t1, %t2 : i32
    %s2 = arith.add %s, %one2 : i32
    scf.yield %s2 : i32
  }
  tile.return %r : i32
}
// CHECK: ^bb0(%i: i32, %acc: i32):
// CHECK-NEXT: %t1 = arith.add %acc, %i : i32
// CHECK-NEXT: %s = arith.add %t1, %t1 : i32
// CHECK-NEXT: %s2 = arith.add %s, %one : i32
// CHECK-NEXT: scf.yield %s2 : i32

// -----

tile.func @functions_are_isolated(%x: i32) -> (i32) {
  %c = arith.constant {value = 5} : i32
  tile.return %c : i32
}
tile.func @other(%x: i32) -> (i32) {
  %c = arith.constant {value = 5} : i32
  tile.return %c : i32
}
// Each function keeps its own constant.
// CHECK: tile.func @functions_are_isolated
// CHECK-NEXT: %c = arith.constant {value = 5} : i32
// CHECK: tile.func @other
// CHECK-NEXT: %c = arith.constant {value = 5} : i32

// -----

tile.func @constant_spellings() -> (i1, i1, f32, f32) {
  %a = arith.constant {value = 1} : i1
  %b = arith.constant {value = true} : i1
  %c = arith.constant {value = 2} : f32
  %d = arith.constant {value = 2.0} : f32
  tile.return %a, %b, %c, %d : i1, i1, f32, f32
}
// Different spellings of one constant value are merged.
// CHECK: %a = arith.constant {value = 1} : i1
// CHECK-NEXT: %c = arith.constant {value = 2} : f32
// CHECK-NEXT: tile.return %a, %a, %c, %c
