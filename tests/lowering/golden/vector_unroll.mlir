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
    %67 = wi.vreduce %58 {kind = "add"} : (vector<16xf32>) -> f32
    %68 = arith.add %z, %67 : f32
    %69 = wi.vreduce %59 {kind = "max", propagate_nan = true} : (vector<16xf32>) -> f32
    %sum, %mx = scf.for %4, %1, %c1, %68, %69 : (i32, i32, i32, f32, f32) -> (f32, f32) {
    ^bb0(%s: i32, %a: f32, %b: f32):
      %p = wi.addptr %x, %s : (ptr<f32>, i32) -> ptr<f32>
      %m = arith.cmp %s, %n {predicate = "lt"} : (i32, i32) -> i1
      %v = wi.gload %p, %m, %ninf : (ptr<f32>, i1, f32) -> f32
      %a2 = arith.add %a, %v : f32
      %b2 = arith.max %b, %v {propagate_nan = true} : f32
      scf.yield %a2, %b2 : f32, f32
    }
    %70 = wi.broadcast %ninf : (f32) -> vector<16xf32>
    %71 = arith.max %c256, %1 : i32
    %72 = arith.sub %71, %1 : i32
    %73 = arith.constant {value = 16} : i32
    %74 = arith.div %72, %73 : i32
    %75 = arith.mul %74, %73 : i32
    %76 = arith.add %1, %75 : i32
    %77 = arith.constant {value = -0.0} : f32
    %78 = wi.broadcast %77 : (f32) -> vector<16xf32>
    %79 = wi.broadcast %mx : (f32) -> vector<16xf32>
    %80 = arith.constant {value = 64} : i32
    %81 = arith.sub %76, %1 : i32
    %82 = arith.div %81, %80 : i32
    %83 = arith.mul %82, %80 : i32
    %84 = arith.add %1, %83 : i32
    %85, %86, %87, %88, %89, %90, %91, %92 = scf.for %1, %84, %80, %78, %79, %78, %79, %78, %79, %78, %79 : (i32, i32, i32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
    ^bb0(%93: i32, %94: vector<16xf32>, %95: vector<16xf32>, %96: vector<16xf32>, %97: vector<16xf32>, %98: vector<16xf32>, %99: vector<16xf32>, %100: vector<16xf32>, %101: vector<16xf32>):
      %102 = arith.add %94, %70 : vector<16xf32>
      %103 = arith.max %95, %70 {propagate_nan = true} : vector<16xf32>
      %104 = arith.constant {value = 16} : i32
      %105 = arith.add %93, %104 : i32
      %106 = arith.add %96, %70 : vector<16xf32>
      %107 = arith.max %97, %70 {propagate_nan = true} : vector<16xf32>
      %108 = arith.constant {value = 32} : i32
      %109 = arith.add %93, %108 : i32
      %110 = arith.add %98, %70 : vector<16xf32>
      %111 = arith.max %99, %70 {propagate_nan = true} : vector<16xf32>
      %112 = arith.constant {value = 48} : i32
      %113 = arith.add %93, %112 : i32
      %114 = arith.add %100, %70 : vector<16xf32>
      %115 = arith.max %101, %70 {propagate_nan = true} : vector<16xf32>
      scf.yield %102, %103, %106, %107, %110, %111, %114, %115 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
    }
    %116 = arith.add %85, %87 : vector<16xf32>
    %117 = arith.add %89, %91 : vector<16xf32>
    %118 = arith.add %116, %117 : vector<16xf32>
    %119 = arith.max %86, %88 {propagate_nan = true} : vector<16xf32>
    %120 = arith.max %90, %92 {propagate_nan = true} : vector<16xf32>
    %121 = arith.max %119, %120 {propagate_nan = true} : vector<16xf32>
    %122, %123 = scf.for %84, %76, %73, %118, %121 : (i32, i32, i32, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>) {
    ^bb0(%124: i32, %125: vector<16xf32>, %126: vector<16xf32>):
      %127 = arith.add %125, %70 : vector<16xf32>
      %128 = arith.max %126, %70 {propagate_nan = true} : vector<16xf32>
      scf.yield %127, %128 : vector<16xf32>, vector<16xf32>
    }
    %129 = wi.vreduce %122 {kind = "add"} : (vector<16xf32>) -> f32
    %130 = arith.add %sum, %129 : f32
    %131 = wi.vreduce %123 {kind = "max", propagate_nan = true} : (vector<16xf32>) -> f32
    %sum_1, %mx_1 = scf.for %76, %c256, %c1, %130, %131 : (i32, i32, i32, f32, f32) -> (f32, f32) {
    ^bb0(%s_1: i32, %a_1: f32, %b_1: f32):
      %p_1 = wi.addptr %x, %s_1 : (ptr<f32>, i32) -> ptr<f32>
      %m_1 = arith.cmp %s_1, %n {predicate = "lt"} : (i32, i32) -> i1
      %v_1 = wi.gload %p_1, %m_1, %ninf : (ptr<f32>, i1, f32) -> f32
      %a2_1 = arith.add %a_1, %v_1 : f32
      %b2_1 = arith.max %b_1, %v_1 {propagate_nan = true} : f32
      scf.yield %a2_1, %b2_1 : f32, f32
    }
    %r = arith.add %sum_1, %mx_1 : f32
    wi.gstore %y, %r : ptr<f32>, f32
    wi.return
  }
}
