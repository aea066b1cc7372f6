// before
builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c256 = arith.constant {value = 256} : i32
    %z = arith.constant {value = -0.0} : f32
    %ninf = arith.constant {value = -inf} : f32
    %sum, %mx = scf.for %c0, %c256, %c1, %z, %ninf : (i32, i32, i32, f32, f32) -> (f32, f32) {
    ^bb0(%s: i32, %a: f32, %b: f32):
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %m = arith.cmp %s, %n {predicate = "lt"} : (i32, i32) -> i1
      %v = wi.gload %p, %m, %ninf : (ptr<f32>, i1, f32) -> f32
      %a2 = arith.add %a, %v : f32
      %b2 = arith.max %b, %v {propagate_nan = true} : f32
      scf.yield %a2, %b2 : f32, f32
    }
    %r = arith.add %sum, %mx : f32
    wi.gstore %y, %r : ptr<f32>, f32
    wi.return
  }
}
// after
builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c256 = arith.constant {value = 256} : i32
    %z = arith.constant {value = -0.0} : f32
    %ninf = arith.constant {value = -inf} : f32
    %0 = arith.min %c256, %n : i32
    %1 = arith.max %0, %c0 : i32
    %2 = arith.constant {value = 16} : i32
    %3 = arith.div %1, %2 : i32
    %4 = arith.mul %3, %2 : i32
    %5 = arith.constant {value = -0.0} : f32
    %6 = wi.broadcast %5 : (f32) -> vector<16xf32>
    %7 = wi.broadcast %ninf : (f32) -> vector<16xf32>
    %8 = arith.constant {value = 64} : i32
    %9 = arith.sub %4, %c0 : i32
    %10 = arith.div %9, %8 : i32
    %11 = arith.mul %10, %8 : i32
    %12 = arith.add %c0, %11 : i32
    %13, %14, %15, %16, %17, %18, %19, %20 = scf.for %c0, %12, %8, %6, %7, %6, %7, %6, %7, %6, %7 : (i32, i32, i32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
    ^bb0(%21: i32, %22: vector<16xf32>, %23: vector<16xf32>, %24: vector<16xf32>, %25: vector<16xf32>, %26: vector<16xf32>, %27: vector<16xf32>, %28: vector<16xf32>, %29: vector<16xf32>):
      %30 = wi.addptr %x, %21 : (ptr<f32>, i32) -> ptr<f32>
      %31 = wi.gvload %30 : (ptr<f32>) -> vector<16xf32>
      %32 = arith.add %22, %31 : vector<16xf32>
      %33 = arith.max %23, %31 {propagate_nan = true} : vector<16xf32>
      %34 = arith.constant {value = 16} : i32
      %35 = arith.add %21, %34 : i32
      %36 = wi.addptr %x, %35 : (ptr<f32>, i32) -> ptr<f32>
      %37 = wi.gvload %36 : (ptr<f32>) -> vector<16xf32>
      %38 = arith.add %24, %37 : vector<16xf32>
      %39 = arith.max %25, %37 {propagate_nan = true} : vector<16xf32>
      %40 = arith.constant {value = 32} : i32
      %41 = arith.add %21, %40 : i32
      %42 = wi.addptr %x, %41 : (ptr<f32>, i32) -> ptr<f32>
      %43 = wi.gvload %42 : (ptr<f32>) -> vector<16xf32>
      %44 = arith.add %26, %43 : vector<16xf32>
      %45 = arith.max %27, %43 {propagate_nan = true} : vector<16xf32>
      %46 = arith.constant {value = 48} : i32
      %47 = arith.add %21, %46 : i32
      %48 = wi.addptr %x, %47 : (ptr<f32>, i32) -> ptr<f32>
      %49 = wi.gvload %48 : (ptr<f32>) -> vector<16xf32>
      %50 = arith.add %28, %49 : vector<16xf32>
      %51 = arith.max %29, %49 {propagate_nan = true} : vector<16xf32>
      scf.yield %32, %33, %38, %39, %44, %45, %50, %51 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
    }
    %52 = arith.add %13, %15 : vector<16xf32>
    %53 = arith.add %17, %19 : vector<16xf32>
    %54 = arith.add %52, %53 : vector<16xf32>
    %55 = arith.max %14, %16 {propagate_nan = true} : vector<16xf32>
    %56 = arith.max %18, %20 {propagate_nan = true} : vector<16xf32>
    %57 = arith.max %55, %56 {propagate_nan = true} : vector<16xf32>
    %58, %59 = scf.for %12, %4, %2, %54, %57 : (i32, i32, i32, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
    ^bb0(%60: i32, %61: vector<16xf32>, %62: vector<16xf32>):
      %63 = wi.addptr %x, %60 : (ptr<f32>, i32) -> ptr<f32>
      %64 = wi.gvload %63 : (ptr<f32>) -> vector<16xf32>
      %65 = arith.add %61, %64 : vector<16xf32>
      %66 = arith.max %62, %64 {propagate_nan = true} : vector<16xf32>
      scf.yield %65, %66 : vector<16xf32>, vector<16xf32>
    }
    %67, %68 = scf.for %4, %1, %2, %58, %59 : (i32, i32, i32, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
    ^bb0(%69: i32, %70: vector<16xf32>, %71: vector<16xf32>):
      %72 = arith.sub %1, %69 : i32
      %73 = wi.addptr %x, %69 : (ptr<f32>, i32) -> ptr<f32>
      %74 = wi.gvload %73, %72 : (ptr<f32>, i32) -> vector<16xf32>
      %75 = arith.add %70, %74 : vector<16xf32>
      %76 = arith.max %71, %74 {propagate_nan = true} : vector<16xf32>
      %77 = wi.lane_ids : vector<16xi32>
      %78 = wi.broadcast %72 : (i32) -> vector<16xi32>
      %79 = arith.cmp %77, %78 {predicate = "lt"} : (vector<16xi32>, vector<16xi32>) -> vector<16xi1>
      %80 = arith.select %79, %75, %70 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      %81 = arith.select %79, %76, %71 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      scf.yield %80, %81 : vector<16xf32>, vector<16xf32>
    }
    %82 = wi.vreduce %67 {kind = "add"} : (vector<16xf32>) -> f32
    %83 = arith.add %z, %82 : f32
    %84 = wi.vreduce %68 {kind = "max", propagate_nan = true} : (vector<16xf32>) -> f32
    %85 = wi.broadcast %ninf : (f32) -> vector<16xf32>
    %86 = arith.max %c256, %1 : i32
    %87 = arith.sub %86, %1 : i32
    %88 = arith.constant {value = 16} : i32
    %89 = arith.div %87, %88 : i32
    %90 = arith.mul %89, %88 : i32
    %91 = arith.add %1, %90 : i32
    %92 = arith.constant {value = -0.0} : f32
    %93 = wi.broadcast %92 : (f32) -> vector<16xf32>
    %94 = wi.broadcast %84 : (f32) -> vector<16xf32>
    %95 = arith.constant {value = 64} : i32
    %96 = arith.sub %91, %1 : i32
    %97 = arith.div %96, %95 : i32
    %98 = arith.mul %97, %95 : i32
    %99 = arith.add %1, %98 : i32
    %100, %101, %102, %103, %104, %105, %106, %107 = scf.for %1, %99, %95, %93, %94, %93, %94, %93, %94, %93, %94 : (i32, i32, i32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
    ^bb0(%108: i32, %109: vector<16xf32>, %110: vector<16xf32>, %111: vector<16xf32>, %112: vector<16xf32>, %113: vector<16xf32>, %114: vector<16xf32>, %115: vector<16xf32>, %116: vector<16xf32>):
      %117 = arith.add %109, %85 : vector<16xf32>
      %118 = arith.max %110, %85 {propagate_nan = true} : vector<16xf32>
      %119 = arith.constant {value = 16} : i32
      %120 = arith.add %108, %119 : i32
      %121 = arith.add %111, %85 : vector<16xf32>
      %122 = arith.max %112, %85 {propagate_nan = true} : vector<16xf32>
      %123 = arith.constant {value = 32} : i32
      %124 = arith.add %108, %123 : i32
      %125 = arith.add %113, %85 : vector<16xf32>
      %126 = arith.max %114, %85 {propagate_nan = true} : vector<16xf32>
      %127 = arith.constant {value = 48} : i32
      %128 = arith.add %108, %127 : i32
      %129 = arith.add %115, %85 : vector<16xf32>
      %130 = arith.max %116, %85 {propagate_nan = true} : vector<16xf32>
      scf.yield %117, %118, %121, %122, %125, %126, %129, %130 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
    }
    %131 = arith.add %100, %102 : vector<16xf32>
    %132 = arith.add %104, %106 : vector<16xf32>
    %133 = arith.add %131, %132 : vector<16xf32>
    %134 = arith.max %101, %103 {propagate_nan = true} : vector<16xf32>
    %135 = arith.max %105, %107 {propagate_nan = true} : vector<16xf32>
    %136 = arith.max %134, %135 {propagate_nan = true} : vector<16xf32>
    %137, %138 = scf.for %99, %91, %88, %133, %136 : (i32, i32, i32, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
    ^bb0(%139: i32, %140: vector<16xf32>, %141: vector<16xf32>):
      %142 = arith.add %140, %85 : vector<16xf32>
      %143 = arith.max %141, %85 {propagate_nan = true} : vector<16xf32>
      scf.yield %142, %143 : vector<16xf32>, vector<16xf32>
    }
    %144, %145 = scf.for %91, %86, %88, %137, %138 : (i32, i32, i32, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
    ^bb0(%146: i32, %147: vector<16xf32>, %148: vector<16xf32>):
      %149 = arith.sub %86, %146 : i32
      %150 = arith.add %147, %85 : vector<16xf32>
      %151 = arith.max %148, %85 {propagate_nan = true} : vector<16xf32>
      %152 = wi.lane_ids : vector<16xi32>
      %153 = wi.broadcast %149 : (i32) -> vector<16xi32>
      %154 = arith.cmp %152, %153 {predicate = "lt"} : (vector<16xi32>, vector<16xi32>) -> vector<16xi1>
      %155 = arith.select %154, %150, %147 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      %156 = arith.select %154, %151, %148 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      scf.yield %155, %156 : vector<16xf32>, vector<16xf32>
    }
    %157 = wi.vreduce %144 {kind = "add"} : (vector<16xf32>) -> f32
    %158 = arith.add %83, %157 : f32
    %159 = wi.vreduce %145 {kind = "max", propagate_nan = true} : (vector<16xf32>) -> f32
    %r = arith.add %158, %159 : f32
    wi.gstore %y, %r : ptr<f32>, f32
    wi.return
  }
}
