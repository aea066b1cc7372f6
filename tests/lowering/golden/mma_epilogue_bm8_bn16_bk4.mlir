builtin.module {
  wi.func @mm_epilogue_kernel(%a_ptr: ptr<f32>, %b_ptr: ptr<f32>, %bias_ptr: ptr<f32>, %c_ptr: ptr<f32>, %M: i32, %N: i32, %K: i32) attributes {divisibility = (1, 1, 1, 1, 1, 1, 1), local_bytes = 0, noalias = true, num_threads = 1} {
    %0 = arith.constant {value = 0} : i32
    %1 = wi.program_id {axis = 0} : i32
    %2 = arith.constant {value = 8} : i32
    %3 = wi.program_id {axis = 1} : i32
    %4 = arith.constant {value = 16} : i32
    %5 = arith.constant {value = 0.0} : f32
    %6 = arith.constant {value = 4} : i32
    %7 = arith.constant {value = 1} : i32
    %8 = wi.alloc : memref<128xf32, private>
    %9 = arith.constant {value = 128} : i32
    %10 = wi.alloc : memref<32xf32, private>
    %11 = wi.alloc : memref<64xf32, private>
    %12 = wi.alloc : memref<16xf32, private>
    %13 = wi.alloc : memref<128xf32, private>
    %14 = arith.mul %1, %2 : i32
    %15 = arith.mul %3, %4 : i32
    %16 = arith.add %K, %6 : i32
    %17 = arith.sub %16, %7 : i32
    %18 = arith.div %17, %6 : i32
    %19 = wi.broadcast %5 : (f32) -> vector<16xf32>
    %20 = arith.constant {value = 128} : i32
    %21 = arith.constant {value = 16} : i32
    scf.for %0, %20, %21 : i32, i32, i32 {
    ^bb0(%22: i32):
      wi.vstore %19, %8, %22 : vector<16xf32>, memref<128xf32, private>, i32
      scf.yield
    }
    scf.for %0, %18, %7 : i32, i32, i32 {
    ^bb0(%23: i32):
      %24 = arith.mul %14, %K : i32
      %25 = wi.addptr %a_ptr, %24 : (ptr<f32>, i32) -> ptr<f32>
      %26 = arith.mul %23, %6 : i32
      %27 = wi.addptr %25, %26 : (ptr<f32>, i32) -> ptr<f32>
      %28 = arith.sub %M, %14 : i32
      %29 = arith.sub %K, %26 : i32
      wi.block_load %10, %27, %5, %K, %28, %29 {shape = (8, 4)} : memref<32xf32, private>, ptr<f32>, f32, i32, i32, i32
      %30 = arith.mul %26, %N : i32
      %31 = wi.addptr %b_ptr, %30 : (ptr<f32>, i32) -> ptr<f32>
      %32 = wi.addptr %31, %15 : (ptr<f32>, i32) -> ptr<f32>
      %33 = arith.sub %K, %26 : i32
      %34 = arith.sub %N, %15 : i32
      wi.block_load %11, %32, %5, %N, %33, %34 {shape = (4, 16)} : memref<64xf32, private>, ptr<f32>, f32, i32, i32, i32
      wi.mma %10, %11, %8 {block_m = 4, block_n = 16, k = 4, m = 8, n = 16, vector_width = 16} : memref<32xf32, private>, memref<64xf32, private>, memref<128xf32, private>
      scf.yield
    }
    %35 = arith.mul %14, %N : i32
    %36 = wi.addptr %c_ptr, %35 : (ptr<f32>, i32) -> ptr<f32>
    %37 = wi.addptr %36, %15 : (ptr<f32>, i32) -> ptr<f32>
    %38 = arith.sub %M, %14 : i32
    %39 = arith.sub %N, %15 : i32
    %40 = arith.sub %N, %15 : i32
    %41 = arith.min %4, %40 : i32
    %42 = arith.max %41, %0 : i32
    %43 = arith.constant {value = 16} : i32
    %44 = arith.div %42, %43 : i32
    %45 = arith.mul %44, %43 : i32
    scf.for %0, %45, %43 : i32, i32, i32 {
    ^bb0(%46: i32):
      %47 = arith.add %15, %46 : i32
      %48 = wi.addptr %bias_ptr, %47 : (ptr<f32>, i32) -> ptr<f32>
      %49 = wi.gvload %48 : (ptr<f32>) -> vector<16xf32>
      wi.vstore %49, %12, %46 : vector<16xf32>, memref<16xf32, private>, i32
      scf.yield
    }
    scf.for %45, %42, %43 : i32, i32, i32 {
    ^bb0(%50: i32):
      %51 = arith.sub %42, %50 : i32
      %52 = arith.add %15, %50 : i32
      %53 = wi.addptr %bias_ptr, %52 : (ptr<f32>, i32) -> ptr<f32>
      %54 = wi.gvload %53, %51 : (ptr<f32>, i32) -> vector<16xf32>
      wi.vstore %54, %12, %50, %51 : vector<16xf32>, memref<16xf32, private>, i32, i32
      scf.yield
    }
    %55 = wi.broadcast %5 : (f32) -> vector<16xf32>
    %56 = arith.max %4, %42 : i32
    %57 = arith.sub %56, %42 : i32
    %58 = arith.constant {value = 16} : i32
    %59 = arith.div %57, %58 : i32
    %60 = arith.mul %59, %58 : i32
    %61 = arith.add %42, %60 : i32
    scf.for %42, %61, %58 : i32, i32, i32 {
    ^bb0(%62: i32):
      wi.vstore %55, %12, %62 : vector<16xf32>, memref<16xf32, private>, i32
      scf.yield
    }
    scf.for %61, %56, %58 : i32, i32, i32 {
    ^bb0(%63: i32):
      %64 = arith.sub %56, %63 : i32
      wi.vstore %55, %12, %63, %64 : vector<16xf32>, memref<16xf32, private>, i32, i32
      scf.yield
    }
    %65 = arith.constant {value = 128} : i32
    %66 = arith.constant {value = 16} : i32
    scf.for %0, %65, %66 : i32, i32, i32 {
    ^bb0(%67: i32):
      %68 = wi.vload %8, %67 : (memref<128xf32, private>, i32) -> vector<16xf32>
      %69 = arith.rem %67, %4 : i32
      %70 = wi.vload %12, %69 : (memref<16xf32, private>, i32) -> vector<16xf32>
      %71 = arith.add %68, %70 : vector<16xf32>
      %72 = math.tanh %71 : vector<16xf32>
      wi.vstore %72, %13, %67 : vector<16xf32>, memref<128xf32, private>, i32
      scf.yield
    }
    wi.block_store %13, %37, %N, %38, %39 {shape = (8, 16)} : memref<128xf32, private>, ptr<f32>, i32, i32, i32
    wi.return
  }
}
