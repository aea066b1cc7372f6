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
    %8 = wi.alloc : memref<128xf32, private>
    %9 = wi.alloc : memref<32xptr<f32>, private>
    %10 = wi.alloc : memref<64xptr<f32>, private>
    %11 = arith.constant {value = 128} : i32
    %12 = arith.constant {value = 32} : i32
    %13 = arith.constant {value = 64} : i32
    %14 = wi.alloc : memref<32xf32, private>
    %15 = wi.alloc : memref<64xf32, private>
    %16 = arith.mul %1, %2 : i32
    %17 = arith.mul %3, %4 : i32
    %18 = arith.add %K, %6 : i32
    %19 = arith.sub %18, %7 : i32
    %20 = arith.div %19, %6 : i32
    scf.for %0, %11, %7 : i32, i32, i32 {
    ^bb0(%21: i32):
      wi.store %5, %8, %21 : f32, memref<128xf32, private>, i32
      scf.yield
    }
    scf.for %0, %12, %7 : i32, i32, i32 {
    ^bb0(%22: i32):
      %23 = arith.rem %22, %6 : i32
      %24 = arith.div %22, %6 : i32
      %25 = arith.add %16, %24 : i32
      %26 = arith.mul %25, %K : i32
      %27 = wi.addptr %a_ptr, %26 : (ptr<f32>, i32) -> ptr<f32>
      %28 = wi.addptr %27, %23 : (ptr<f32>, i32) -> ptr<f32>
      wi.store %28, %9, %22 : ptr<f32>, memref<32xptr<f32>, private>, i32
      scf.yield
    }
    scf.for %0, %13, %7 : i32, i32, i32 {
    ^bb0(%29: i32):
      %30 = arith.rem %29, %4 : i32
      %31 = arith.div %29, %4 : i32
      %32 = arith.mul %31, %N : i32
      %33 = wi.addptr %b_ptr, %32 : (ptr<f32>, i32) -> ptr<f32>
      %34 = arith.add %17, %30 : i32
      %35 = wi.addptr %33, %34 : (ptr<f32>, i32) -> ptr<f32>
      wi.store %35, %10, %29 : ptr<f32>, memref<64xptr<f32>, private>, i32
      scf.yield
    }
    scf.for %0, %20, %7 : i32, i32, i32 {
    ^bb0(%36: i32):
      %37 = arith.mul %36, %6 : i32
      %38 = arith.sub %K, %37 : i32
      scf.for %0, %12, %7 : i32, i32, i32 {
      ^bb0(%39: i32):
        %40 = wi.load %9, %39 : (memref<32xptr<f32>, private>, i32) -> ptr<f32>
        %41 = arith.rem %39, %6 : i32
        %42 = arith.div %39, %6 : i32
        %43 = arith.add %16, %42 : i32
        %44 = arith.cmp %43, %M {predicate = "lt"} : (i32, i32) -> i1
        %45 = arith.cmp %41, %38 {predicate = "lt"} : (i32, i32) -> i1
        %46 = arith.and %44, %45 : i1
        %47 = wi.gload %40, %46, %5 : (ptr<f32>, i1, f32) -> f32
        wi.store %47, %14, %39 : f32, memref<32xf32, private>, i32
        scf.yield
      }
      scf.for %0, %13, %7 : i32, i32, i32 {
      ^bb0(%48: i32):
        %49 = wi.load %10, %48 : (memref<64xptr<f32>, private>, i32) -> ptr<f32>
        %50 = arith.rem %48, %4 : i32
        %51 = arith.div %48, %4 : i32
        %52 = arith.cmp %51, %38 {predicate = "lt"} : (i32, i32) -> i1
        %53 = arith.add %17, %50 : i32
        %54 = arith.cmp %53, %N {predicate = "lt"} : (i32, i32) -> i1
        %55 = arith.and %52, %54 : i1
        %56 = wi.gload %49, %55, %5 : (ptr<f32>, i1, f32) -> f32
        wi.store %56, %15, %48 : f32, memref<64xf32, private>, i32
        scf.yield
      }
      wi.mma %14, %15, %8 {block_m = 4, block_n = 16, k = 4, m = 8, n = 16, vector_width = 16} : memref<32xf32, private>, memref<64xf32, private>, memref<128xf32, private>
      %57 = arith.mul %N, %6 : i32
      scf.for %0, %12, %7 : i32, i32, i32 {
      ^bb0(%58: i32):
        %59 = wi.load %9, %58 : (memref<32xptr<f32>, private>, i32) -> ptr<f32>
        %60 = wi.addptr %59, %6 : (ptr<f32>, i32) -> ptr<f32>
        wi.store %60, %9, %58 : ptr<f32>, memref<32xptr<f32>, private>, i32
        scf.yield
      }
      scf.for %0, %13, %7 : i32, i32, i32 {
      ^bb0(%61: i32):
        %62 = wi.load %10, %61 : (memref<64xptr<f32>, private>, i32) -> ptr<f32>
        %63 = wi.addptr %62, %57 : (ptr<f32>, i32) -> ptr<f32>
        wi.store %63, %10, %61 : ptr<f32>, memref<64xptr<f32>, private>, i32
        scf.yield
      }
      scf.yield
    }
    scf.for %0, %11, %7 : i32, i32, i32 {
    ^bb0(%64: i32):
      %65 = arith.rem %64, %4 : i32
      %66 = arith.div %64, %4 : i32
      %67 = arith.add %16, %66 : i32
      %68 = arith.mul %67, %N : i32
      %69 = wi.addptr %c_ptr, %68 : (ptr<f32>, i32) -> ptr<f32>
      %70 = arith.add %17, %65 : i32
      %71 = wi.addptr %69, %70 : (ptr<f32>, i32) -> ptr<f32>
      %72 = wi.load %8, %64 : (memref<128xf32, private>, i32) -> f32
      %73 = arith.add %16, %66 : i32
      %74 = arith.cmp %73, %M {predicate = "lt"} : (i32, i32) -> i1
      %75 = arith.add %17, %65 : i32
      %76 = arith.cmp %75, %N {predicate = "lt"} : (i32, i32) -> i1
      %77 = arith.and %74, %76 : i1
      wi.gstore %71, %72, %77 : ptr<f32>, f32, i1
      scf.yield
    }
    wi.return
  }
}
