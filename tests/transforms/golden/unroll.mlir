// RUN: unroll,canonicalize,cse
// Full unrolling of small constant-trip loops.

tile.func @sum3(%x: i32) -> (i32) {
  %c0 = arith.constant {value = 0} : i32
  %c1 = arith.constant {value = 1} : i32
  %c3 = arith.constant {value = 3} : i32
  %r = scf.for %c0, %c3, %c1, %x : (i32, i32, i32, i32) -> i32 {
  ^bb0(%i: i32, %a: i32):
    %a2 = arith.add %a, %i : i32
    %a3 = arith.mul %a2, %a2 : i32
    scf.yield %a3 : i32
  }
  tile.return %r : i32
}
// Three copies of the body with i = 0, 1, 2 (i = 0 folds away).
// CHECK-NOT: scf.for
// CHECK: %a3 = arith.mul %x, %x : i32
// CHECK-NEXT: %i = arith.constant {value = 1} : i32
// CHECK-NEXT: %a2 = arith.add %a3, %i : i32
// CHECK-NEXT: %a3_1 = arith.mul %a2, %a2 : i32
// CHECK-NEXT: %i_1 = arith.constant {value = 2} : i32
// CHECK-NEXT: %a2_1 = arith.add %a3_1, %i_1 : i32
// CHECK-NEXT: %a3_2 = arith.mul %a2_1, %a2_1 : i32
// CHECK-NEXT: tile.return %a3_2 : i32

// -----

tile.func @too_long(%x: i32) -> (i32) {
  %c0 = arith.constant {value = 0} : i32
  %c1 = arith.constant {value = 1} : i32
  %c9 = arith.constant {value = 9} : i32
  %r = scf.for %c0, %c9, %c1, %x : (i32, i32, i32, i32) -> i32 {
  ^bb0(%i: i32, %a: i32):
    %a2 = arith.add %a, %i : i32
    scf.yield %a2 : i32
  }
  tile.return %r : i32
}
// 9 trips > max-trip (default 8): the loop stays.
// CHECK: scf.for

// -----

tile.func @nest(%x: i32) -> (i32) {
  %c0 = arith.constant {value = 0} : i32
  %c1 = arith.constant {value = 1} : i32
  %c2 = arith.constant {value = 2} : i32
  %r = scf.for %c0, %c2, %c1, %x : (i32, i32, i32, i32) -> i32 {
  ^bb0(%i: i32, %a: i32):
    %s = scf.for %c0, %c2, %c1, %a : (i32, i32, i32, i32) -> i32 {
    ^bb1(%j: i32, %b: i32):
      %b2 = arith.mul %b, %c2 : i32
      scf.yield %b2 : i32
    }
    scf.yield %s : i32
  }
  tile.return %r : i32
}
// The inner loop unrolls first, then the outer one: four doublings.
// CHECK-NOT: scf.for
// CHECK: arith.mul %x, %c2
// CHECK: arith.mul
// CHECK: arith.mul
// CHECK: arith.mul
// CHECK-NEXT: tile.return
