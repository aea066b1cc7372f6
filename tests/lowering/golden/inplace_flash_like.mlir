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
      %24 = arith.constant {value = 256} : i32
      %25 = arith.constant {value = 16} : i32
      scf.for %0, %24, %25 : i32, i32, i32 {
      ^bb0(%26: i32):
        %27 = wi.vload %6, %26 : (memref<256xf32, private>, i32) -> vector<16xf32>
        wi.vstore %27, %9, %26 : vector<16xf32>, memref<256xf32, private>, i32
        scf.yield
      }
      wi.mma %3, %8, %9 {block_m = 8, block_n = 16, k = 16, m = 16, n = 16, vector_width = 16} : memref<256xf32, private>, memref<256xf32, private>, memref<256xf32, private>
      %28 = wi.broadcast %10 : (f32) -> vector<16xf32>
      %29 = arith.constant {value = 256} : i32
      %30 = arith.constant {value = 16} : i32
      scf.for %0, %29, %30 : i32, i32, i32 {
      ^bb0(%31: i32):
        %32 = wi.vload %9, %31 : (memref<256xf32, private>, i32) -> vector<16xf32>
        %33 = arith.mul %32, %28 : vector<16xf32>
        %34 = math.exp2 %33 : vector<16xf32>
        wi.vstore %34, %11, %31 : vector<16xf32>, memref<256xf32, private>, i32
        scf.yield
      }
      scf.for %0, %1, %4 : i32, i32, i32 {
      ^bb0(%35: i32):
        %36 = arith.constant {value = -0.0} : f32
        %37 = arith.constant {value = 0} : i32
        %38 = arith.constant {value = 16} : i32
        %39 = arith.constant {value = -0.0} : f32
        %40 = wi.broadcast %39 : (f32) -> vector<16xf32>
        %41 = arith.constant {value = 64} : i32
        %42 = arith.sub %38, %37 : i32
        %43 = arith.div %42, %41 : i32
        %44 = arith.mul %43, %41 : i32
        %45 = arith.add %37, %44 : i32
        %46, %47, %48, %49 = scf.for %37, %45, %41, %40, %40, %40, %40 : (i32, i32, i32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
        ^bb0(%50: i32, %51: vector<16xf32>, %52: vector<16xf32>, %53: vector<16xf32>, %54: vector<16xf32>):
          %55 = arith.mul %35, %1 : i32
          %56 = arith.add %55, %50 : i32
          %57 = wi.vload %11, %56 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %58 = arith.add %51, %57 : vector<16xf32>
          %59 = arith.constant {value = 16} : i32
          %60 = arith.add %50, %59 : i32
          %61 = arith.mul %35, %1 : i32
          %62 = arith.add %61, %60 : i32
          %63 = wi.vload %11, %62 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %64 = arith.add %52, %63 : vector<16xf32>
          %65 = arith.constant {value = 32} : i32
          %66 = arith.add %50, %65 : i32
          %67 = arith.mul %35, %1 : i32
          %68 = arith.add %67, %66 : i32
          %69 = wi.vload %11, %68 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %70 = arith.add %53, %69 : vector<16xf32>
          %71 = arith.constant {value = 48} : i32
          %72 = arith.add %50, %71 : i32
          %73 = arith.mul %35, %1 : i32
          %74 = arith.add %73, %72 : i32
          %75 = wi.vload %11, %74 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %76 = arith.add %54, %75 : vector<16xf32>
          scf.yield %58, %64, %70, %76 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
        }
        %77 = arith.add %46, %47 : vector<16xf32>
        %78 = arith.add %48, %49 : vector<16xf32>
        %79 = arith.add %77, %78 : vector<16xf32>
        %80 = scf.for %45, %38, %38, %79 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
        ^bb0(%81: i32, %82: vector<16xf32>):
          %83 = arith.mul %35, %1 : i32
          %84 = arith.add %83, %81 : i32
          %85 = wi.vload %11, %84 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %86 = arith.add %82, %85 : vector<16xf32>
          scf.yield %86 : vector<16xf32>
        }
        %87 = wi.vreduce %80 {kind = "add"} : (vector<16xf32>) -> f32
        %88 = arith.add %36, %87 : f32
        wi.store %88, %12, %35 : f32, memref<16xf32, private>, i32
        scf.yield
      }
      %89 = arith.constant {value = nan} : f32
      %90 = arith.constant {value = 0} : i32
      %91 = arith.constant {value = 16} : i32
      %92 = wi.broadcast %89 : (f32) -> vector<16xf32>
      %93 = arith.constant {value = 64} : i32
      %94 = arith.sub %91, %90 : i32
      %95 = arith.div %94, %93 : i32
      %96 = arith.mul %95, %93 : i32
      %97 = arith.add %90, %96 : i32
      %98, %99, %100, %101 = scf.for %90, %97, %93, %92, %92, %92, %92 : (i32, i32, i32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
      ^bb0(%102: i32, %103: vector<16xf32>, %104: vector<16xf32>, %105: vector<16xf32>, %106: vector<16xf32>):
        %107 = wi.vload %12, %102 : (memref<16xf32, private>, i32) -> vector<16xf32>
        %108 = arith.max %103, %107 {propagate_nan = false} : vector<16xf32>
        %109 = arith.constant {value = 16} : i32
        %110 = arith.add %102, %109 : i32
        %111 = wi.vload %12, %110 : (memref<16xf32, private>, i32) -> vector<16xf32>
        %112 = arith.max %104, %111 {propagate_nan = false} : vector<16xf32>
        %113 = arith.constant {value = 32} : i32
        %114 = arith.add %102, %113 : i32
        %115 = wi.vload %12, %114 : (memref<16xf32, private>, i32) -> vector<16xf32>
        %116 = arith.max %105, %115 {propagate_nan = false} : vector<16xf32>
        %117 = arith.constant {value = 48} : i32
        %118 = arith.add %102, %117 : i32
        %119 = wi.vload %12, %118 : (memref<16xf32, private>, i32) -> vector<16xf32>
        %120 = arith.max %106, %119 {propagate_nan = false} : vector<16xf32>
        scf.yield %108, %112, %116, %120 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
      }
      %121 = arith.max %98, %99 {propagate_nan = false} : vector<16xf32>
      %122 = arith.max %100, %101 {propagate_nan = false} : vector<16xf32>
      %123 = arith.max %121, %122 {propagate_nan = false} : vector<16xf32>
      %124 = scf.for %97, %91, %91, %123 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
      ^bb0(%125: i32, %126: vector<16xf32>):
        %127 = wi.vload %12, %125 : (memref<16xf32, private>, i32) -> vector<16xf32>
        %128 = arith.max %126, %127 {propagate_nan = false} : vector<16xf32>
        scf.yield %128 : vector<16xf32>
      }
      %129 = wi.vreduce %124 {kind = "max", propagate_nan = false} : (vector<16xf32>) -> f32
      %130 = arith.cmp %129, %13 {predicate = "gt"} : (f32, f32) -> i1
      scf.if %130 : i1 {
        %131 = wi.broadcast %14 : (f32) -> vector<16xf32>
        %132 = wi.broadcast %15 : (f32) -> vector<16xf32>
        %133 = arith.constant {value = 256} : i32
        %134 = arith.constant {value = 16} : i32
        scf.for %0, %133, %134 : i32, i32, i32 {
        ^bb0(%135: i32):
          %136 = wi.vload %5, %135 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %137 = arith.mul %136, %131 : vector<16xf32>
          wi.vstore %137, %5, %135 : vector<16xf32>, memref<256xf32, private>, i32
          %138 = wi.vload %6, %135 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %139 = arith.sub %138, %132 : vector<16xf32>
          wi.vstore %139, %6, %135 : vector<16xf32>, memref<256xf32, private>, i32
          %140 = wi.vload %11, %135 : (memref<256xf32, private>, i32) -> vector<16xf32>
          %141 = arith.mul %140, %131 : vector<16xf32>
          wi.vstore %141, %9, %135 : vector<16xf32>, memref<256xf32, private>, i32
          scf.yield
        }
        scf.yield
      } {
        %142 = arith.constant {value = 256} : i32
        %143 = arith.constant {value = 16} : i32
        scf.for %0, %142, %143 : i32, i32, i32 {
        ^bb0(%144: i32):
          %145 = wi.vload %11, %144 : (memref<256xf32, private>, i32) -> vector<16xf32>
          wi.vstore %145, %9, %144 : vector<16xf32>, memref<256xf32, private>, i32
          scf.yield
        }
        scf.yield
      }
      wi.mma %9, %8, %5 {block_m = 8, block_n = 16, k = 16, m = 16, n = 16, vector_width = 16} : memref<256xf32, private>, memref<256xf32, private>, memref<256xf32, private>
      scf.yield
    }
    %146 = arith.constant {value = 256} : i32
    %147 = arith.constant {value = 16} : i32
    scf.for %0, %146, %147 : i32, i32, i32 {
    ^bb0(%148: i32):
      %149 = arith.rem %148, %1 : i32
      %150 = arith.div %148, %1 : i32
      %151 = arith.mul %150, %1 : i32
      %152 = wi.addptr %out_ptr, %151 : (ptr<f32>, i32) -> ptr<f32>
      %153 = wi.addptr %152, %149 : (ptr<f32>, i32) -> ptr<f32>
      %154 = wi.vload %5, %148 : (memref<256xf32, private>, i32) -> vector<16xf32>
      %155 = wi.vload %6, %148 : (memref<256xf32, private>, i32) -> vector<16xf32>
      %156 = arith.add %154, %155 : vector<16xf32>
      wi.gvstore %153, %156 : ptr<f32>, vector<16xf32>
      scf.yield
    }
    wi.return
  }
}
