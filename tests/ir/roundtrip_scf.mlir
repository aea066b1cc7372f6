// Golden round-trip for the scf dialect (for / if / while, nested regions).
builtin.module {
  tile.func @loops(%n: i32, %x: f32) -> (f32, i32) {
    %zero = arith.constant {value = 0} : i32
    %one = arith.constant {value = 1} : i32
    %total = scf.for %zero, %n, %one, %x : (i32, i32, i32, f32) -> f32 {
    ^bb0(%i: i32, %acc: f32):
      %0 = arith.cast %i : (i32) -> f32
      %acc_1 = arith.add %acc, %0 : f32
      scf.yield %acc_1 : f32
    }
    scf.for %zero, %n, %one : i32, i32, i32 {
    ^bb0(%i_1: i32):
      %1 = arith.cmp %i_1, %one {predicate = "eq"} : (i32, i32) -> i1
      scf.if %1 : i1 {
        tile.print %i_1 {prefix = "i = "} : i32
        scf.yield
      } {
        scf.yield
      }
      scf.yield
    }
    %positive = arith.cmp %n, %zero {predicate = "gt"} : (i32, i32) -> i1
    %picked, %2 = scf.if %positive : (i1) -> (f32, i32) {
      scf.yield %total, %n : f32, i32
    } {
      scf.yield %x, %zero : f32, i32
    }
    %3, %4 = scf.while %n, %picked : (i32, f32) -> (i32, f32) {
    ^bb0(%j: i32, %v: f32):
      %go = arith.cmp %j, %zero {predicate = "gt"} : (i32, i32) -> i1
      scf.condition %go, %j, %v : i1, i32, f32
    } {
    ^bb0(%j_1: i32, %v_1: f32):
      %j_2 = arith.sub %j_1, %one : i32
      scf.yield %j_2, %v_1 : i32, f32
    }
    tile.return %4, %2 : f32, i32
  }
  tile.func @spin(%a: i32) -> (i32) {
    %0 = scf.while %a : i32 {
    ^bb0(%1: i32):
      %2 = arith.cmp %1, %1 {predicate = "ne"} : (i32, i32) -> i1
      scf.condition %2, %1 : i1, i32
    } {
    ^bb0(%3: i32):
      scf.yield %3 : i32
    }
    scf.while {
      %4 = arith.constant {value = false} : i1
      scf.condition %4 : i1
    } {
      scf.yield
    }
    tile.return %0 : i32
  }
}
