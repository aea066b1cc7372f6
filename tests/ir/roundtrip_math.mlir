// Golden round-trip for the math dialect: parse + print must reproduce this file.
builtin.module {
  tile.func @math_ops(%x: tile<16x16xf32>, %y: tile<16x16xf32>, %z: f64) -> (tile<16x16xf32>, f64) {
    %exp = math.exp %x : tile<16x16xf32>
    %exp2 = math.exp2 %exp : tile<16x16xf32>
    %log = math.log %exp2 : tile<16x16xf32>
    %log2 = math.log2 %log : tile<16x16xf32>
    %sqrt = math.sqrt %log2 : tile<16x16xf32>
    %sqrt_rn = math.sqrt_rn %sqrt : tile<16x16xf32>
    %rsqrt = math.rsqrt %sqrt_rn : tile<16x16xf32>
    %sin = math.sin %rsqrt : tile<16x16xf32>
    %cos = math.cos %sin : tile<16x16xf32>
    %tanh = math.tanh %cos : tile<16x16xf32>
    %erf = math.erf %tanh : tile<16x16xf32>
    %floor = math.floor %erf : tile<16x16xf32>
    %ceil = math.ceil %floor : tile<16x16xf32>
    %abs = math.abs %ceil : tile<16x16xf32>
    %0 = math.pow %abs, %y : tile<16x16xf32>
    %1 = math.div_rn %0, %y : tile<16x16xf32>
    %2 = math.fma %1, %y, %1 : tile<16x16xf32>
    %3 = math.abs %z : f64
    %4 = arith.constant {value = 3} : u32
    %5 = math.umulhi %4, %4 : u32
    %6 = arith.constant {value = -5} : i64
    %7 = math.abs %6 : i64
    %8 = math.umulhi %7, %7 : i64
    tile.return %2, %3 : tile<16x16xf32>, f64
  }
}
