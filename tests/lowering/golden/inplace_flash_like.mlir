builtin.module {
  wi.func @flash_like(%x_ptr: ptr<f32>, %y_ptr: ptr<f32>, %out_ptr: ptr<f32>, %steps: i32) attributes {divisibility = (1, 1, 1, 1), local_bytes = 0, noalias = true, num_threads = 1} {
    %0 = arith.constant {value = 0} : i32
    %1 = arith.constant {value = 16} : i32
    %2 = arith.constant {value = 0.0} : f32
    %3 = wi.alloc : memref<256xf32, private>
    %4 = arith.constant {value = 1} : i32
    %5 = wi.alloc : memref<256xf32, private>
    %6 = wi.alloc : memref<256xf32, private>
    %7 = arith.constant {value = 256} : i32
    %8 = wi.alloc : memref<256xf32, private>
    %9 = wi.alloc : memref<256xf32, private>
    %10 = arith.constant {value = 0.01} : f32
    %11 = wi.alloc : memref<256xf32, private>
    %12 = wi.alloc : memref<16xf32, private>
    %13 = arith.constant {value = 1e+30} : f32
    %14 = arith.constant {value = 0.5} : f32
    %15 = arith.constant {value = 1.0} : f32
    wi.block_load %3, %x_ptr, %2, %1, %1, %1 {shape = (16, 16)} : memref<256xf32, private>, ptr<f32>, f32, i32, i32, i32
    %16 = wi.broadcast %2 : (f32) -> vector<16xf32>
    %17 = arith.constant {value = 256} : i32
    %18 = arith.constant {value = 16} : i32
    scf.for %0, %17, %18 : i32, i32, i32 {
    ^bb0(%19: i32):
      wi.vstore %16, %5, %19 : vector<16xf32>, memref<256xf32, private>, i32
      wi.vstore %16, %6, %19 : vector<16xf32>, memref<256xf32, private>, i32
      scf.yield
    }
    scf.for %0, %steps, %4 : i32, i32, i32 {
    ^bb0(%20: i32):
      %21 = arith.mul %20, %1 : i32
      %22 = arith.mul %21, %1 : i32
      %23 = wi.addptr %y_ptr, %22 : (ptr<f32>, i32) -> ptr<f32>
      wi.block_load %8, %23, %2, %1, %1, %1 {shape = (16, 16)} : memref<256xf32, private>, ptr<f32>, f32, i32, i32, i32
      wi.mma %3, %8, %9, %6 {block_m = 8, block_n = 16, k = 16, m = 16, n = 16, vector_width = 16} : memref<256xf32, private>, memref<256xf32, private>, memref<256xf32, private>, memref<256xf32, private>
      %24 = wi.broadcast %10 : (f32) -> vector<16xf32>
      %25 = arith.constant {value = 256} : i32
      %26 = arith.constant {value = 16} : i32
      scf.for %0, %25, %26 : i32, i32, i32 {
      ^bb0(%27: i32):
        %28 = wi.vload %9, %27 : (memref<256xf32, private>, i32) -> vector<16xf32>
        %29 = arith.mul %28, %24 : vector<16xf32>
        %30 = math.exp2 %29 : vector<16xf32>
        wi.vstore %30, %11, %27 : vector<16xf32>, memref<256xf32, private>, i32
        scf.yield
      }
      scf.for %0, %1, %4 : i32, i32, i32 {
      ^bb0(%31: i32):
        %32 = arith.constant {value = -0.0} : f32
        %33 = arith.constant {value = 0} : i32
        %34 = arith.constant {value = 16} : i32
        %35 = arith.constant {value = -0.0} : f32
        %36 = wi.broadcast %35 : (f32) -> vector<16xf32>
        %37 = arith.constant {value = 64} : i32
        %38 = arith.sub %34, %33 : i32
        %39 = arith.div %38, %37 : i32
        %40 = arith.mul %39, %37 : i32
        %41 = arith.add %33, %40 : i32
        %42, %43, %44, %45 = scf.for %33, %41, %37, %36, %36, %36, %36 : (i32, i32, i32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
        ^bb0(%46: i32, %47: vector<16xf32>, %48: vector<16xf32>, %49: vector<16xf32>, %50: vector<16xf32>):
          %51 = arith.mul %31, %1 : i32
          %52 = arith.add %51, %46 : i32
          %53 = wi.vload %11, %52 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %54 = arith.add %47, %53 : vector<16xf32>
          %55 = arith.constant {value = 16} : i32
          %56 = arith.add %46, %55 : i32
          %57 = arith.mul %31, %1 : i32
          %58 = arith.add %57, %56 : i32
          %59 = wi.vload %11, %58 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %60 = arith.add %48, %59 : vector<16xf32>
          %61 = arith.constant {value = 32} : i32
          %62 = arith.add %46, %61 : i32
          %63 = arith.mul %31, %1 : i32
          %64 = arith.add %63, %62 : i32
          %65 = wi.vload %11, %64 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %66 = arith.add %49, %65 : vector<16xf32>
          %67 = arith.constant {value = 48} : i32
          %68 = arith.add %46, %67 : i32
          %69 = arith.mul %31, %1 : i32
          %70 = arith.add %69, %68 : i32
          %71 = wi.vload %11, %70 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %72 = arith.add %50, %71 : vector<16xf32>
          scf.yield %54, %60, %66, %72 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
        }
        %73 = arith.add %42, %43 : vector<16xf32>
        %74 = arith.add %44, %45 : vector<16xf32>
        %75 = arith.add %73, %74 : vector<16xf32>
        %76 = scf.for %41, %34, %34, %75 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
        ^bb0(%77: i32, %78: vector<16xf32>):
          %79 = arith.mul %31, %1 : i32
          %80 = arith.add %79, %77 : i32
          %81 = wi.vload %11, %80 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %82 = arith.add %78, %81 : vector<16xf32>
          scf.yield %82 : vector<16xf32>
        }
        %83 = wi.vreduce %76 {kind = "add"} : (vector<16xf32>) -> f32
        %84 = arith.add %32, %83 : f32
        wi.store %84, %12, %31 : f32, memref<16xf32, private>, i32
        scf.yield
      }
      %85 = arith.constant {value = nan} : f32
      %86 = arith.constant {value = 0} : i32
      %87 = arith.constant {value = 16} : i32
      %88 = wi.broadcast %85 : (f32) -> vector<16xf32>
      %89 = arith.constant {value = 64} : i32
      %90 = arith.sub %87, %86 : i32
      %91 = arith.div %90, %89 : i32
      %92 = arith.mul %91, %89 : i32
      %93 = arith.add %86, %92 : i32
      %94, %95, %96, %97 = scf.for %86, %93, %89, %88, %88, %88, %88 : (i32, i32, i32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
      ^bb0(%98: i32, %99: vector<16xf32>, %100: vector<16xf32>, %101: vector<16xf32>, %102: vector<16xf32>):
        %103 = wi.vload %12, %98 : (memref<16xf32, private>, i32) -> vector<16xf32>
        %104 = arith.max %99, %103 {propagate_nan = false} : vector<16xf32>
        %105 = arith.constant {value = 16} : i32
        %106 = arith.add %98, %105 : i32
        %107 = wi.vload %12, %106 : (memref<16xf32, private>, i32) -> vector<16xf32>
        %108 = arith.max %100, %107 {propagate_nan = false} : vector<16xf32>
        %109 = arith.constant {value = 32} : i32
        %110 = arith.add %98, %109 : i32
        %111 = wi.vload %12, %110 : (memref<16xf32, private>, i32) -> vector<16xf32>
        %112 = arith.max %101, %111 {propagate_nan = false} : vector<16xf32>
        %113 = arith.constant {value = 48} : i32
        %114 = arith.add %98, %113 : i32
        %115 = wi.vload %12, %114 : (memref<16xf32, private>, i32) -> vector<16xf32>
        %116 = arith.max %102, %115 {propagate_nan = false} : vector<16xf32>
        scf.yield %104, %108, %112, %116 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
      }
      %117 = arith.max %94, %95 {propagate_nan = false} : vector<16xf32>
      %118 = arith.max %96, %97 {propagate_nan = false} : vector<16xf32>
      %119 = arith.max %117, %118 {propagate_nan = false} : vector<16xf32>
      %120 = scf.for %93, %87, %87, %119 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
      ^bb0(%121: i32, %122: vector<16xf32>):
        %123 = wi.vload %12, %121 : (memref<16xf32, private>, i32) -> vector<16xf32>
        %124 = arith.max %122, %123 {propagate_nan = false} : vector<16xf32>
        scf.yield %124 : vector<16xf32>
      }
      %125 = wi.vreduce %120 {kind = "max", propagate_nan = false} : (vector<16xf32>) -> f32
      %126 = arith.cmp %125, %13 {predicate = "gt"} : (f32, f32) -> i1
      scf.if %126 : i1 {
        %127 = wi.broadcast %14 : (f32) -> vector<16xf32>
        %128 = wi.broadcast %15 : (f32) -> vector<16xf32>
        %129 = arith.constant {value = 256} : i32
        %130 = arith.constant {value = 16} : i32
        scf.for %0, %129, %130 : i32, i32, i32 {
        ^bb0(%131: i32):
          %132 = wi.vload %5, %131 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %133 = arith.mul %132, %127 : vector<16xf32>
          wi.vstore %133, %5, %131 : vector<16xf32>, memref<256xf32, private>, i32
          %134 = wi.vload %6, %131 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %135 = arith.sub %134, %128 : vector<16xf32>
          wi.vstore %135, %6, %131 : vector<16xf32>, memref<256xf32, private>, i32
          %136 = wi.vload %11, %131 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %137 = arith.mul %136, %127 : vector<16xf32>
          wi.vstore %137, %9, %131 : vector<16xf32>, memref<256xf32, private>, i32
          scf.yield
        }
        scf.yield
      } {
        %138 = arith.constant {value = 256} : i32
        %139 = arith.constant {value = 16} : i32
        scf.for %0, %138, %139 : i32, i32, i32 {
        ^bb0(%140: i32):
          %141 = wi.vload %11, %140 : (memref<256xf32, private>, i32) -> vector<16xf32>
          wi.vstore %141, %9, %140 : vector<16xf32>, memref<256xf32, private>, i32
          scf.yield
        }
        scf.yield
      }
      wi.mma %9, %8, %5 {block_m = 8, block_n = 16, k = 16, m = 16, n = 16, vector_width = 16} : memref<256xf32, private>, memref<256xf32, private>, memref<256xf32, private>
      scf.yield
    }
    %142 = arith.constant {value = 256} : i32
    %143 = arith.constant {value = 16} : i32
    scf.for %0, %142, %143 : i32, i32, i32 {
    ^bb0(%144: i32):
      %145 = arith.rem %144, %1 : i32
      %146 = arith.div %144, %1 : i32
      %147 = arith.mul %146, %1 : i32
      %148 = wi.addptr %out_ptr, %147 : (ptr<f32>, i32) -> ptr<f32>
      %149 = wi.addptr %148, %145 : (ptr<f32>, i32) -> ptr<f32>
      %150 = wi.vload %5, %144 : (memref<256xf32, private>, i32) -> vector<16xf32>
      %151 = wi.vload %6, %144 : (memref<256xf32, private>, i32) -> vector<16xf32>
      %152 = arith.add %150, %151 : vector<16xf32>
      wi.gvstore %149, %152 : ptr<f32>, vector<16xf32>
      scf.yield
    }
    wi.return
  }
}
