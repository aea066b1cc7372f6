// Golden round-trip for the arith dialect: parse + print must reproduce this file.
builtin.module {
  tile.func @arith_ops(%x: tile<128xf32>, %y: tile<128xf32>, %n: i32) -> (tile<128xf32>) {
    %acc = arith.add %x, %y : tile<128xf32>
    %acc_1 = arith.sub %acc, %y : tile<128xf32>
    %acc_2 = arith.mul %acc_1, %y : tile<128xf32>
    %acc_3 = arith.div %acc_2, %y : tile<128xf32>
    %acc_4 = arith.rem %acc_3, %y : tile<128xf32>
    %0 = arith.max %acc_4, %y {propagate_nan = true} : tile<128xf32>
    %1 = arith.min %0, %y : tile<128xf32>
    %2 = arith.neg %1 : tile<128xf32>
    %3 = arith.and %n, %n : i32
    %4 = arith.or %3, %n : i32
    %5 = arith.xor %4, %n : i32
    %6 = arith.shl %5, %n : i32
    %7 = arith.shr %6, %n : i32
    %8 = arith.add %7, %n : i32
    %9 = arith.rem %8, %n : i32
    %10 = arith.div %9, %n : i32
    %11 = arith.constant {value = -7} : i32
    %12 = arith.max %10, %11 : i32
    %as_unsigned = arith.cast %12 : (i32) -> u64
    %umax = arith.constant {value = 18446744073709551615} : u64
    %13 = arith.shr %as_unsigned, %umax : u64
    %14 = arith.cast %13 : (u64) -> i1
    %flag = arith.constant {value = true} : i1
    %15 = arith.constant {value = false} : i1
    %16 = arith.xor %flag, %15 : i1
    %mask = arith.cmp %2, %y {predicate = "lt"} : (tile<128xf32>, tile<128xf32>) -> tile<128xi1>
    %17 = arith.cmp %12, %n {predicate = "eq"} : (i32, i32) -> i1
    %18 = arith.cmp %12, %n {predicate = "ne"} : (i32, i32) -> i1
    %19 = arith.cmp %12, %n {predicate = "le"} : (i32, i32) -> i1
    %20 = arith.cmp %12, %n {predicate = "gt"} : (i32, i32) -> i1
    %21 = arith.cmp %12, %n {predicate = "ge"} : (i32, i32) -> i1
    %22 = arith.select %mask, %2, %y : (tile<128xi1>, tile<128xf32>, tile<128xf32>) -> tile<128xf32>
    %23 = arith.bitcast %22 : (tile<128xf32>) -> tile<128xi32>
    %24 = arith.bitcast %23 : (tile<128xi32>) -> tile<128xf32>
    %25 = arith.cast %24 : (tile<128xf32>) -> tile<128xf16>
    %26 = arith.cast %25 : (tile<128xf16>) -> tile<128xf32>
    %27 = arith.constant {value = nan} : f32
    %28 = arith.constant {value = inf} : f64
    %29 = arith.constant {value = -inf} : f16
    %30 = arith.constant {value = -0.0} : f32
    %31 = arith.constant {value = 1e-300} : f64
    %32 = arith.constant {value = 0.1} : f32
    %33 = arith.constant {value = 3} : bf16
    %34 = arith.constant {value = -9223372036854775808} : i64
    %35 = arith.constant {value = 255} : u8
    tile.return %26 : tile<128xf32>
  }
}
