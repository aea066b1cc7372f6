builtin.module {
  wi.func @softmax_kernel(%output_ptr: ptr<f32>, %input_ptr: ptr<f32>, %input_row_stride: i32, %output_row_stride: i32, %n_rows: i32, %n_cols: i32) attributes {divisibility = (1, 1, 1, 1, 1, 1), local_bytes = 0, noalias = true, num_threads = 1} {
    %0 = arith.constant {value = 0} : i32
    %1 = wi.program_id {axis = 0} : i32
    %2 = wi.num_programs {axis = 0} : i32
    %3 = arith.constant {value = -inf} : f32
    %4 = arith.constant {value = 64} : i32
    %5 = arith.constant {value = 1} : i32
    %6 = wi.alloc : memref<64xf32, private>
    scf.for %1, %n_rows, %2 : i32, i32, i32 {
    ^bb0(%7: i32):
      %8 = arith.add %7, %2 : i32
      %9 = arith.constant {value = 0} : i32
      %10 = arith.cmp %2, %9 {predicate = "gt"} : (i32, i32) -> i1
      %11 = arith.cmp %8, %n_rows {predicate = "lt"} : (i32, i32) -> i1
      %12 = arith.cmp %8, %n_rows {predicate = "gt"} : (i32, i32) -> i1
      %13 = arith.select %10, %11, %12 : i1
      %14 = arith.select %13, %8, %7 : (i1, i32, i32) -> i32
      %15 = arith.mul %7, %input_row_stride : i32
      %16 = arith.mul %14, %input_row_stride : i32
      %17 = wi.addptr %input_ptr, %15 : (ptr<f32>, i32) -> ptr<f32>
      %18 = wi.addptr %input_ptr, %16 : (ptr<f32>, i32) -> ptr<f32>
      %19 = arith.constant {value = nan} : f32
      %20 = arith.min %4, %n_cols : i32
      %21 = arith.max %20, %0 : i32
      %22 = arith.constant {value = 16} : i32
      %23 = arith.div %21, %22 : i32
      %24 = arith.mul %23, %22 : i32
      %25 = wi.broadcast %19 : (f32) -> vector<16xf32>
      %26 = arith.constant {value = 64} : i32
      %27 = arith.sub %24, %0 : i32
      %28 = arith.div %27, %26 : i32
      %29 = arith.mul %28, %26 : i32
      %30 = arith.add %0, %29 : i32
      %31, %32, %33, %34 = scf.for %0, %30, %26, %25, %25, %25, %25 : (i32, i32, i32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
      ^bb0(%35: i32, %36: vector<16xf32>, %37: vector<16xf32>, %38: vector<16xf32>, %39: vector<16xf32>):
        %40 = wi.addptr %17, %35 : (ptr<f32>, i32) -> ptr<f32>
        %41 = wi.gvload %40 : (ptr<f32>) -> vector<16xf32>
        %42 = arith.max %36, %41 {propagate_nan = false} : vector<16xf32>
        %43 = arith.constant {value = 16} : i32
        %44 = arith.add %35, %43 : i32
        %45 = wi.addptr %17, %44 : (ptr<f32>, i32) -> ptr<f32>
        %46 = wi.gvload %45 : (ptr<f32>) -> vector<16xf32>
        %47 = arith.max %37, %46 {propagate_nan = false} : vector<16xf32>
        %48 = arith.constant {value = 32} : i32
        %49 = arith.add %35, %48 : i32
        %50 = wi.addptr %17, %49 : (ptr<f32>, i32) -> ptr<f32>
        %51 = wi.gvload %50 : (ptr<f32>) -> vector<16xf32>
        %52 = arith.max %38, %51 {propagate_nan = false} : vector<16xf32>
        %53 = arith.constant {value = 48} : i32
        %54 = arith.add %35, %53 : i32
        %55 = wi.addptr %17, %54 : (ptr<f32>, i32) -> ptr<f32>
        %56 = wi.gvload %55 : (ptr<f32>) -> vector<16xf32>
        %57 = arith.max %39, %56 {propagate_nan = false} : vector<16xf32>
        scf.yield %42, %47, %52, %57 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
      }
      %58 = arith.max %31, %32 {propagate_nan = false} : vector<16xf32>
      %59 = arith.max %33, %34 {propagate_nan = false} : vector<16xf32>
      %60 = arith.max %58, %59 {propagate_nan = false} : vector<16xf32>
      %61 = scf.for %30, %24, %22, %60 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
      ^bb0(%62: i32, %63: vector<16xf32>):
        %64 = wi.addptr %17, %62 : (ptr<f32>, i32) -> ptr<f32>
        %65 = wi.gvload %64 : (ptr<f32>) -> vector<16xf32>
        %66 = arith.max %63, %65 {propagate_nan = false} : vector<16xf32>
        scf.yield %66 : vector<16xf32>
      }
      %67 = scf.for %24, %21, %22, %61 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
      ^bb0(%68: i32, %69: vector<16xf32>):
        %70 = arith.sub %21, %68 : i32
        %71 = wi.addptr %17, %68 : (ptr<f32>, i32) -> ptr<f32>
        %72 = wi.gvload %71, %70 : (ptr<f32>, i32) -> vector<16xf32>
        %73 = arith.max %69, %72 {propagate_nan = false} : vector<16xf32>
        %74 = wi.lane_ids : vector<16xi32>
        %75 = wi.broadcast %70 : (i32) -> vector<16xi32>
        %76 = arith.cmp %74, %75 {predicate = "lt"} : (vector<16xi32>, vector<16xi32>) -> vector<16xi1>
        %77 = arith.select %76, %73, %69 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
        scf.yield %77 : vector<16xf32>
      }
      %78 = wi.vreduce %67 {kind = "max", propagate_nan = false} : (vector<16xf32>) -> f32
      %79 = wi.broadcast %3 : (f32) -> vector<16xf32>
      %80 = arith.max %4, %21 : i32
      %81 = arith.sub %80, %21 : i32
      %82 = arith.constant {value = 16} : i32
      %83 = arith.div %81, %82 : i32
      %84 = arith.mul %83, %82 : i32
      %85 = arith.add %21, %84 : i32
      %86 = wi.broadcast %78 : (f32) -> vector<16xf32>
      %87 = arith.constant {value = 64} : i32
      %88 = arith.sub %85, %21 : i32
      %89 = arith.div %88, %87 : i32
      %90 = arith.mul %89, %87 : i32
      %91 = arith.add %21, %90 : i32
      %92, %93, %94, %95 = scf.for %21, %91, %87, %86, %86, %86, %86 : (i32, i32, i32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
      ^bb0(%96: i32, %97: vector<16xf32>, %98: vector<16xf32>, %99: vector<16xf32>, %100: vector<16xf32>):
        %101 = arith.max %97, %79 {propagate_nan = false} : vector<16xf32>
        %102 = arith.constant {value = 16} : i32
        %103 = arith.add %96, %102 : i32
        %104 = arith.max %98, %79 {propagate_nan = false} : vector<16xf32>
        %105 = arith.constant {value = 32} : i32
        %106 = arith.add %96, %105 : i32
        %107 = arith.max %99, %79 {propagate_nan = false} : vector<16xf32>
        %108 = arith.constant {value = 48} : i32
        %109 = arith.add %96, %108 : i32
        %110 = arith.max %100, %79 {propagate_nan = false} : vector<16xf32>
        scf.yield %101, %104, %107, %110 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
      }
      %111 = arith.max %92, %93 {propagate_nan = false} : vector<16xf32>
      %112 = arith.max %94, %95 {propagate_nan = false} : vector<16xf32>
      %113 = arith.max %111, %112 {propagate_nan = false} : vector<16xf32>
      %114 = scf.for %91, %85, %82, %113 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
      ^bb0(%115: i32, %116: vector<16xf32>):
        %117 = arith.max %116, %79 {propagate_nan = false} : vector<16xf32>
        scf.yield %117 : vector<16xf32>
      }
      %118 = scf.for %85, %80, %82, %114 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
      ^bb0(%119: i32, %120: vector<16xf32>):
        %121 = arith.sub %80, %119 : i32
        %122 = arith.max %120, %79 {propagate_nan = false} : vector<16xf32>
        %123 = wi.lane_ids : vector<16xi32>
        %124 = wi.broadcast %121 : (i32) -> vector<16xi32>
        %125 = arith.cmp %123, %124 {predicate = "lt"} : (vector<16xi32>, vector<16xi32>) -> vector<16xi1>
        %126 = arith.select %125, %122, %120 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
        scf.yield %126 : vector<16xf32>
      }
      %127 = wi.vreduce %118 {kind = "max", propagate_nan = false} : (vector<16xf32>) -> f32
      %128 = arith.constant {value = -0.0} : f32
      %129 = wi.broadcast %127 : (f32) -> vector<16xf32>
      %130 = arith.min %4, %n_cols : i32
      %131 = arith.max %130, %0 : i32
      %132 = arith.constant {value = 16} : i32
      %133 = arith.div %131, %132 : i32
      %134 = arith.mul %133, %132 : i32
      %135 = arith.constant {value = -0.0} : f32
      %136 = wi.broadcast %135 : (f32) -> vector<16xf32>
      %137 = scf.for %0, %134, %132, %136 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
      ^bb0(%138: i32, %139: vector<16xf32>):
        %140 = wi.addptr %17, %138 : (ptr<f32>, i32) -> ptr<f32>
        %141 = wi.addptr %18, %138 : (ptr<f32>, i32) -> ptr<f32>
        %142 = wi.gvload %140 : (ptr<f32>) -> vector<16xf32>
        wi.prefetch %141 : ptr<f32>
        %143 = arith.sub %142, %129 : vector<16xf32>
        %144 = math.exp %143 : vector<16xf32>
        wi.vstore %144, %6, %138 : vector<16xf32>, memref<64xf32, private>, i32
        %145 = arith.add %139, %144 : vector<16xf32>
        scf.yield %145 : vector<16xf32>
      }
      %146 = scf.for %134, %131, %132, %137 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
      ^bb0(%147: i32, %148: vector<16xf32>):
        %149 = arith.sub %131, %147 : i32
        %150 = wi.addptr %17, %147 : (ptr<f32>, i32) -> ptr<f32>
        %151 = wi.gvload %150, %149 : (ptr<f32>, i32) -> vector<16xf32>
        %152 = arith.sub %151, %129 : vector<16xf32>
        %153 = math.exp %152 : vector<16xf32>
        wi.vstore %153, %6, %147, %149 : vector<16xf32>, memref<64xf32, private>, i32, i32
        %154 = arith.add %148, %153 : vector<16xf32>
        %155 = wi.lane_ids : vector<16xi32>
        %156 = wi.broadcast %149 : (i32) -> vector<16xi32>
        %157 = arith.cmp %155, %156 {predicate = "lt"} : (vector<16xi32>, vector<16xi32>) -> vector<16xi1>
        %158 = arith.select %157, %154, %148 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
        scf.yield %158 : vector<16xf32>
      }
      %159 = wi.vreduce %146 {kind = "add"} : (vector<16xf32>) -> f32
      %160 = arith.add %128, %159 : f32
      %161 = wi.broadcast %3 : (f32) -> vector<16xf32>
      %162 = wi.broadcast %127 : (f32) -> vector<16xf32>
      %163 = arith.max %4, %131 : i32
      %164 = arith.sub %163, %131 : i32
      %165 = arith.constant {value = 16} : i32
      %166 = arith.div %164, %165 : i32
      %167 = arith.mul %166, %165 : i32
      %168 = arith.add %131, %167 : i32
      %169 = arith.constant {value = -0.0} : f32
      %170 = wi.broadcast %169 : (f32) -> vector<16xf32>
      %171 = scf.for %131, %168, %165, %170 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
      ^bb0(%172: i32, %173: vector<16xf32>):
        %174 = arith.sub %161, %162 : vector<16xf32>
        %175 = math.exp %174 : vector<16xf32>
        wi.vstore %175, %6, %172 : vector<16xf32>, memref<64xf32, private>, i32
        %176 = arith.add %173, %175 : vector<16xf32>
        scf.yield %176 : vector<16xf32>
      }
      %177 = scf.for %168, %163, %165, %171 : (i32, i32, i32, vector<16xf32>) -> vector<16xf32> {
      ^bb0(%178: i32, %179: vector<16xf32>):
        %180 = arith.sub %163, %178 : i32
        %181 = arith.sub %161, %162 : vector<16xf32>
        %182 = math.exp %181 : vector<16xf32>
        wi.vstore %182, %6, %178, %180 : vector<16xf32>, memref<64xf32, private>, i32, i32
        %183 = arith.add %179, %182 : vector<16xf32>
        %184 = wi.lane_ids : vector<16xi32>
        %185 = wi.broadcast %180 : (i32) -> vector<16xi32>
        %186 = arith.cmp %184, %185 {predicate = "lt"} : (vector<16xi32>, vector<16xi32>) -> vector<16xi1>
        %187 = arith.select %186, %183, %179 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
        scf.yield %187 : vector<16xf32>
      }
      %188 = wi.vreduce %177 {kind = "add"} : (vector<16xf32>) -> f32
      %189 = arith.add %160, %188 : f32
      %190 = arith.mul %7, %output_row_stride : i32
      %191 = wi.addptr %output_ptr, %190 : (ptr<f32>, i32) -> ptr<f32>
      %192 = wi.broadcast %189 : (f32) -> vector<16xf32>
      %193 = arith.min %4, %n_cols : i32
      %194 = arith.max %193, %0 : i32
      %195 = arith.constant {value = 16} : i32
      %196 = arith.div %194, %195 : i32
      %197 = arith.mul %196, %195 : i32
      scf.for %0, %197, %195 : i32, i32, i32 {
      ^bb0(%198: i32):
        %199 = wi.addptr %191, %198 : (ptr<f32>, i32) -> ptr<f32>
        %200 = wi.vload %6, %198 : (memref<64xf32, private>, i32) -> vector<16xf32>
        %201 = arith.div %200, %192 : vector<16xf32>
        wi.gvstore %199, %201 {nontemporal = true} : ptr<f32>, vector<16xf32>
        scf.yield
      }
      scf.for %197, %194, %195 : i32, i32, i32 {
      ^bb0(%202: i32):
        %203 = arith.sub %194, %202 : i32
        %204 = wi.addptr %191, %202 : (ptr<f32>, i32) -> ptr<f32>
        %205 = wi.vload %6, %202, %203 : (memref<64xf32, private>, i32, i32) -> vector<16xf32>
        %206 = arith.div %205, %192 : vector<16xf32>
        wi.gvstore %204, %206, %203 {nontemporal = true} : ptr<f32>, vector<16xf32>, i32
        scf.yield
      }
      scf.yield
    }
    wi.return
  }
}
