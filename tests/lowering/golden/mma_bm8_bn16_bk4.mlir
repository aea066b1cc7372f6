builtin.module {
  wi.func @mm_kernel(%a_ptr: ptr<f32>, %b_ptr: ptr<f32>, %c_ptr: ptr<f32>, %M: i32, %N: i32, %K: i32) attributes {divisibility = (1, 1, 1, 1, 1, 1), local_bytes = 0, noalias = true, num_threads = 1} {
    %0 = arith.constant {value = 0} : i32
    %1 = wi.program_id {axis = 0} : i32
    %2 = arith.constant {value = 8} : i32
    %3 = wi.program_id {axis = 1} : i32
    %4 = arith.constant {value = 16} : i32
    %5 = arith.constant {value = 0.0} : f32
    %6 = arith.constant {value = 4} : i32
    %7 = arith.constant {value = 1} : i32
    %8 = arith.constant {value = 0} : i64
    %9 = wi.alloc : memref<128xf32, private>
    %10 = arith.constant {value = 128} : i32
    %11 = wi.alloc : memref<32xf32, private>
    %12 = wi.alloc : memref<64xf32, private>
    %13 = arith.constant {value = 4} : i64
    %14 = arith.mul %1, %2 : i32
    %15 = arith.mul %3, %4 : i32
    %16 = arith.mul %14, %K : i32
    %17 = wi.addptr %a_ptr, %16 : (ptr<f32>, i32) -> ptr<f32>
    %18 = wi.addptr %b_ptr, %15 : (ptr<f32>, i32) -> ptr<f32>
    %19 = arith.add %K, %6 : i32
    %20 = arith.sub %19, %7 : i32
    %21 = arith.div %20, %6 : i32
    %22 = wi.broadcast %5 : (f32) -> vector<16xf32>
    %23 = arith.constant {value = 128} : i32
    %24 = arith.constant {value = 16} : i32
    scf.for %0, %23, %24 : i32, i32, i32 {
    ^bb0(%25: i32):
      wi.vstore %22, %9, %25 : vector<16xf32>, memref<128xf32, private>, i32
      scf.yield
    }
    %26, %27 = scf.for %0, %21, %7, %8, %8 : (i32, i32, i32, i64, i64) -> (i64, i64) {
    ^bb0(%28: i32, %29: i64, %30: i64):
      %31 = wi.addptr %17, %29 : (ptr<f32>, i64) -> ptr<f32>
      %32 = wi.addptr %18, %30 : (ptr<f32>, i64) -> ptr<f32>
      %33 = arith.sub %M, %14 : i32
      %34 = arith.mul %28, %6 : i32
      %35 = arith.sub %K, %34 : i32
      wi.block_load %11, %31, %5, %K, %33, %35 {shape = (8, 4)} : memref<32xf32, private>, ptr<f32>, f32, i32, i32, i32
      %36 = arith.sub %N, %15 : i32
      wi.block_load %12, %32, %5, %N, %35, %36 {shape = (4, 16)} : memref<64xf32, private>, ptr<f32>, f32, i32, i32, i32
      wi.mma %11, %12, %9 {block_m = 4, block_n = 16, k = 4, m = 8, n = 16, vector_width = 16} : memref<32xf32, private>, memref<64xf32, private>, memref<128xf32, private>
      %37 = arith.mul %N, %6 : i32
      %38 = arith.add %29, %13 : i64
      %39 = arith.cast %37 : (i32) -> i64
      %40 = arith.add %30, %39 : i64
      scf.yield %38, %40 : i64, i64
    }
    %41 = arith.mul %14, %N : i32
    %42 = wi.addptr %c_ptr, %41 : (ptr<f32>, i32) -> ptr<f32>
    %43 = wi.addptr %42, %15 : (ptr<f32>, i32) -> ptr<f32>
    %44 = arith.sub %M, %14 : i32
    %45 = arith.sub %N, %15 : i32
    wi.block_store %9, %43, %N, %44, %45 {shape = (8, 16)} : memref<128xf32, private>, ptr<f32>, i32, i32, i32
    wi.return
  }
}
