// before
builtin.module {
  wi.func @tail(%x: ptr<f32>, %ix: ptr<i32>, %y: ptr<f32>, %y2: ptr<f32>, %iy: ptr<i32>, %f: ptr<f32>, %n: i32, %rows: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c4 = arith.constant {value = 4} : i32
    %c32 = arith.constant {value = 32} : i32
    %c128 = arith.constant {value = 128} : i32
    %big = arith.constant {value = 2147483647} : i32
    %two = arith.constant {value = 2.0} : f32
    %ninf = arith.constant {value = -inf} : f32
    %pinf = arith.constant {value = inf} : f32
    %fz = arith.constant {value = 0.0} : f32
    %fone = arith.constant {value = 1.0} : f32
    %buf = wi.alloc : memref<256xi32, private>
    %t = wi.alloc : memref<128xf32, private>
    %lo, %xr = scf.for %c0, %n, %c1, %big, %c0 : (i32, i32, i32, i32, i32) -> (i32, i32) {
    ^bb0(%s: i32, %a: i32, %b: i32):
      %p = wi.addptr %ix, %s : (ptr<i32>, i32) -> ptr<i32>
      %v = wi.gload %p : (ptr<i32>) -> i32
      wi.store %v, %buf, %s : i32, memref<256xi32, private>, i32
      %a2 = arith.min %a, %v : i32
      %b2 = arith.xor %b, %v : i32
      scf.yield %a2, %b2 : i32, i32
    }
    wi.gstore %iy, %lo : ptr<i32>, i32
    %iy1 = wi.addptr %iy, %c1 : (ptr<i32>, i32) -> ptr<i32>
    wi.gstore %iy1, %xr : ptr<i32>, i32
    scf.for %c0, %c128, %c1 : i32, i32, i32 {
    ^bb0(%u: i32):
      %r = arith.div %u, %c32 : i32
      %g = arith.cmp %r, %rows {predicate = "lt"} : (i32, i32) -> i1
      %bd = arith.cmp %u, %n {predicate = "lt"} : (i32, i32) -> i1
      %m = arith.and %g, %bd : i1
      %p2 = wi.addptr %x, %u : (ptr<f32>, i32) -> ptr<f32>
      %v2 = wi.gload %p2, %m, %two : (ptr<f32>, i1, f32) -> f32
      %w2 = arith.add %v2, %fone : f32
      %q2 = wi.addptr %y, %u : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q2, %w2, %m {nontemporal = true} : ptr<f32>, f32, i1
      scf.yield
    }
    scf.for %c0, %c128, %c1 : i32, i32, i32 {
    ^bb0(%z: i32):
      %pz = wi.addptr %x, %z : (ptr<f32>, i32) -> ptr<f32>
      %vz = wi.gload %pz : (ptr<f32>) -> f32
      wi.store %vz, %t, %z : f32, memref<128xf32, private>, i32
      scf.yield
    }
    scf.for %c0, %c128, %c1 : i32, i32, i32 {
    ^bb0(%w: i32):
      %col = arith.rem %w, %c32 : i32
      %row = arith.div %w, %c32 : i32
      %k = arith.mul %col, %c4 : i32
      %idx = arith.add %k, %row : i32
      %e = wi.load %t, %idx : (memref<128xf32, private>, i32) -> f32
      %ok = arith.cmp %w, %n {predicate = "lt"} : (i32, i32) -> i1
      %q3 = wi.addptr %y2, %w : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q3, %e, %ok : ptr<f32>, f32, i1
      scf.yield
    }
    %sum, %mx, %mn, %mxn, %mnn, %pr = scf.for %c0, %c128, %c1, %fz, %ninf, %pinf, %ninf, %pinf, %fone : (i32, i32, i32, f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32, f32, f32) {
    ^bb0(%q: i32, %s0: f32, %s1: f32, %s2: f32, %s3: f32, %s4: f32, %s5: f32):
      %pq = wi.addptr %x, %q : (ptr<f32>, i32) -> ptr<f32>
      %mq = arith.cmp %q, %n {predicate = "lt"} : (i32, i32) -> i1
      %vq = wi.gload %pq, %mq, %fone : (ptr<f32>, i1, f32) -> f32
      %r0 = arith.add %s0, %vq : f32
      %r1 = arith.max %s1, %vq {propagate_nan = false} : f32
      %r2 = arith.min %s2, %vq {propagate_nan = false} : f32
      %r3 = arith.max %s3, %vq {propagate_nan = true} : f32
      %r4 = arith.min %s4, %vq {propagate_nan = true} : f32
      %r5 = arith.mul %s5, %vq : f32
      scf.yield %r0, %r1, %r2, %r3, %r4, %r5 : f32, f32, f32, f32, f32, f32
    }
    wi.gstore %f, %sum : ptr<f32>, f32
    %f1 = wi.addptr %f, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f1, %mx : ptr<f32>, f32
    %f2 = wi.addptr %f1, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f2, %mn : ptr<f32>, f32
    %f3 = wi.addptr %f2, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f3, %mxn : ptr<f32>, f32
    %f4 = wi.addptr %f3, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f4, %mnn : ptr<f32>, f32
    %f5 = wi.addptr %f4, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f5, %pr : ptr<f32>, f32
    wi.return
  }
}
// after
builtin.module {
  wi.func @tail(%x: ptr<f32>, %ix: ptr<i32>, %y: ptr<f32>, %y2: ptr<f32>, %iy: ptr<i32>, %f: ptr<f32>, %n: i32, %rows: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c4 = arith.constant {value = 4} : i32
    %c32 = arith.constant {value = 32} : i32
    %c128 = arith.constant {value = 128} : i32
    %big = arith.constant {value = 2147483647} : i32
    %two = arith.constant {value = 2.0} : f32
    %ninf = arith.constant {value = -inf} : f32
    %pinf = arith.constant {value = inf} : f32
    %fz = arith.constant {value = 0.0} : f32
    %fone = arith.constant {value = 1.0} : f32
    %buf = wi.alloc : memref<256xi32, private>
    %t = wi.alloc : memref<128xf32, private>
    %0 = arith.max %n, %c0 : i32
    %1 = arith.constant {value = 16} : i32
    %2 = arith.div %0, %1 : i32
    %3 = arith.mul %2, %1 : i32
    %4 = wi.broadcast %big : (i32) -> vector<16xi32>
    %5 = arith.constant {value = 0} : i32
    %6 = wi.broadcast %5 : (i32) -> vector<16xi32>
    %7, %8 = scf.for %c0, %3, %1, %4, %6 : (i32, i32, i32, vector<16xi32>, vector<16xi32>) -> (vector<16xi32>, vector<16xi32>) {
    ^bb0(%9: i32, %10: vector<16xi32>, %11: vector<16xi32>):
      %12 = wi.addptr %ix, %9 : (ptr<i32>, i32) -> ptr<i32>
      %13 = wi.gvload %12 : (ptr<i32>) -> vector<16xi32>
      wi.vstore %13, %buf, %9 : vector<16xi32>, memref<256xi32, private>, i32
      %14 = arith.min %10, %13 : vector<16xi32>
      %15 = arith.xor %11, %13 : vector<16xi32>
      scf.yield %14, %15 : vector<16xi32>, vector<16xi32>
    }
    %16, %17 = scf.for %3, %0, %1, %7, %8 : (i32, i32, i32, vector<16xi32>, vector<16xi32>) -> (vector<16xi32>, vector<16xi32>) {
    ^bb0(%18: i32, %19: vector<16xi32>, %20: vector<16xi32>):
      %21 = arith.sub %0, %18 : i32
      %22 = wi.addptr %ix, %18 : (ptr<i32>, i32) -> ptr<i32>
      %23 = wi.gvload %22, %21 : (ptr<i32>, i32) -> vector<16xi32>
      wi.vstore %23, %buf, %18, %21 : vector<16xi32>, memref<256xi32, private>, i32, i32
      %24 = arith.min %19, %23 : vector<16xi32>
      %25 = arith.xor %20, %23 : vector<16xi32>
      %26 = wi.lane_ids : vector<16xi32>
      %27 = wi.broadcast %21 : (i32) -> vector<16xi32>
      %28 = arith.cmp %26, %27 {predicate = "lt"} : (vector<16xi32>, vector<16xi32>) -> vector<16xi1>
      %29 = arith.select %28, %24, %19 : (vector<16xi1>, vector<16xi32>, vector<16xi32>) -> vector<16xi32>
      %30 = arith.select %28, %25, %20 : (vector<16xi1>, vector<16xi32>, vector<16xi32>) -> vector<16xi32>
      scf.yield %29, %30 : vector<16xi32>, vector<16xi32>
    }
    %31 = wi.vreduce %16 {kind = "min"} : (vector<16xi32>) -> i32
    %32 = wi.vreduce %17 {kind = "xor"} : (vector<16xi32>) -> i32
    %33 = arith.xor %c0, %32 : i32
    wi.gstore %iy, %31 : ptr<i32>, i32
    %iy1 = wi.addptr %iy, %c1 : (ptr<i32>, i32) -> ptr<i32>
    wi.gstore %iy1, %33 : ptr<i32>, i32
    %34 = wi.broadcast %fone : (f32) -> vector<16xf32>
    %35 = arith.min %c128, %n : i32
    %36 = arith.max %35, %c0 : i32
    %37 = arith.constant {value = 16} : i32
    %38 = arith.div %36, %37 : i32
    %39 = arith.mul %38, %37 : i32
    scf.for %c0, %39, %37 : i32, i32, i32 {
    ^bb0(%40: i32):
      %41 = arith.div %40, %c32 : i32
      %42 = arith.cmp %41, %rows {predicate = "lt"} : (i32, i32) -> i1
      %43 = wi.addptr %x, %40 : (ptr<f32>, i32) -> ptr<f32>
      %44 = wi.gvload %43, %42, %two : (ptr<f32>, i1, f32) -> vector<16xf32>
      %45 = arith.add %44, %34 : vector<16xf32>
      %46 = wi.addptr %y, %40 : (ptr<f32>, i32) -> ptr<f32>
      wi.gvstore %46, %45, %42 {nontemporal = true} : ptr<f32>, vector<16xf32>, i1
      scf.yield
    }
    %47 = arith.constant {value = 0} : i32
    scf.for %39, %36, %37 : i32, i32, i32 {
    ^bb0(%48: i32):
      %49 = arith.sub %36, %48 : i32
      %50 = arith.div %48, %c32 : i32
      %51 = arith.cmp %50, %rows {predicate = "lt"} : (i32, i32) -> i1
      %52 = wi.addptr %x, %48 : (ptr<f32>, i32) -> ptr<f32>
      %53 = arith.select %51, %49, %47 : (i1, i32, i32) -> i32
      %54 = wi.gvload %52, %53, %two : (ptr<f32>, i32, f32) -> vector<16xf32>
      %55 = arith.add %54, %34 : vector<16xf32>
      %56 = wi.addptr %y, %48 : (ptr<f32>, i32) -> ptr<f32>
      %57 = arith.select %51, %49, %47 : (i1, i32, i32) -> i32
      wi.gvstore %56, %55, %57 {nontemporal = true} : ptr<f32>, vector<16xf32>, i32
      scf.yield
    }
    scf.for %36, %c128, %c1 : i32, i32, i32 {
    ^bb0(%u: i32):
      %r = arith.div %u, %c32 : i32
      %g = arith.cmp %r, %rows {predicate = "lt"} : (i32, i32) -> i1
      %bd = arith.cmp %u, %n {predicate = "lt"} : (i32, i32) -> i1
      %m = arith.and %g, %bd : i1
      %p2 = wi.addptr %x, %u : (ptr<f32>, i32) -> ptr<f32>
      %v2 = wi.gload %p2, %m, %two : (ptr<f32>, i1, f32) -> f32
      %w2 = arith.add %v2, %fone : f32
      %q2 = wi.addptr %y, %u : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q2, %w2, %m {nontemporal = true} : ptr<f32>, f32, i1
      scf.yield
    }
    %58 = arith.constant {value = 128} : i32
    %59 = arith.constant {value = 16} : i32
    scf.for %c0, %58, %59 : i32, i32, i32 {
    ^bb0(%60: i32):
      %61 = wi.addptr %x, %60 : (ptr<f32>, i32) -> ptr<f32>
      %62 = wi.gvload %61 : (ptr<f32>) -> vector<16xf32>
      wi.vstore %62, %t, %60 : vector<16xf32>, memref<128xf32, private>, i32
      scf.yield
    }
    %63 = arith.min %c128, %n : i32
    %64 = arith.max %63, %c0 : i32
    %65 = arith.constant {value = 16} : i32
    %66 = arith.div %64, %65 : i32
    %67 = arith.mul %66, %65 : i32
    scf.for %c0, %67, %65 : i32, i32, i32 {
    ^bb0(%68: i32):
      %69 = arith.rem %68, %c32 : i32
      %70 = arith.div %68, %c32 : i32
      %71 = arith.mul %69, %c4 : i32
      %72 = arith.add %71, %70 : i32
      %73 = wi.vload %t, %72 {stride = 4} : (memref<128xf32, private>, i32) -> vector<16xf32>
      %74 = wi.addptr %y2, %68 : (ptr<f32>, i32) -> ptr<f32>
      wi.gvstore %74, %73 : ptr<f32>, vector<16xf32>
      scf.yield
    }
    scf.for %67, %64, %65 : i32, i32, i32 {
    ^bb0(%75: i32):
      %76 = arith.sub %64, %75 : i32
      %77 = arith.rem %75, %c32 : i32
      %78 = arith.div %75, %c32 : i32
      %79 = arith.mul %77, %c4 : i32
      %80 = arith.add %79, %78 : i32
      %81 = wi.vload %t, %80, %76 {stride = 4} : (memref<128xf32, private>, i32, i32) -> vector<16xf32>
      %82 = wi.addptr %y2, %75 : (ptr<f32>, i32) -> ptr<f32>
      wi.gvstore %82, %81, %76 : ptr<f32>, vector<16xf32>, i32
      scf.yield
    }
    scf.for %64, %c128, %c1 : i32, i32, i32 {
    ^bb0(%w: i32):
      %col = arith.rem %w, %c32 : i32
      %row = arith.div %w, %c32 : i32
      %k = arith.mul %col, %c4 : i32
      %idx = arith.add %k, %row : i32
      %e = wi.load %t, %idx : (memref<128xf32, private>, i32) -> f32
      %ok = arith.cmp %w, %n {predicate = "lt"} : (i32, i32) -> i1
      %q3 = wi.addptr %y2, %w : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q3, %e, %ok : ptr<f32>, f32, i1
      scf.yield
    }
    %83 = arith.min %c128, %n : i32
    %84 = arith.max %83, %c0 : i32
    %85 = arith.constant {value = 16} : i32
    %86 = arith.div %84, %85 : i32
    %87 = arith.mul %86, %85 : i32
    %88 = arith.constant {value = -0.0} : f32
    %89 = wi.broadcast %88 : (f32) -> vector<16xf32>
    %90 = wi.broadcast %ninf : (f32) -> vector<16xf32>
    %91 = wi.broadcast %pinf : (f32) -> vector<16xf32>
    %92 = wi.broadcast %ninf : (f32) -> vector<16xf32>
    %93 = wi.broadcast %pinf : (f32) -> vector<16xf32>
    %94 = arith.constant {value = 1.0} : f32
    %95 = wi.broadcast %94 : (f32) -> vector<16xf32>
    %96, %97, %98, %99, %100, %101 = scf.for %c0, %87, %85, %89, %90, %91, %92, %93, %95 : (i32, i32, i32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
    ^bb0(%102: i32, %103: vector<16xf32>, %104: vector<16xf32>, %105: vector<16xf32>, %106: vector<16xf32>, %107: vector<16xf32>, %108: vector<16xf32>):
      %109 = wi.addptr %x, %102 : (ptr<f32>, i32) -> ptr<f32>
      %110 = wi.gvload %109 : (ptr<f32>) -> vector<16xf32>
      %111 = arith.add %103, %110 : vector<16xf32>
      %112 = arith.max %104, %110 {propagate_nan = false} : vector<16xf32>
      %113 = arith.min %105, %110 {propagate_nan = false} : vector<16xf32>
      %114 = arith.max %106, %110 {propagate_nan = true} : vector<16xf32>
      %115 = arith.min %107, %110 {propagate_nan = true} : vector<16xf32>
      %116 = arith.mul %108, %110 : vector<16xf32>
      scf.yield %111, %112, %113, %114, %115, %116 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
    }
    %117, %118, %119, %120, %121, %122 = scf.for %87, %84, %85, %96, %97, %98, %99, %100, %101 : (i32, i32, i32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
    ^bb0(%123: i32, %124: vector<16xf32>, %125: vector<16xf32>, %126: vector<16xf32>, %127: vector<16xf32>, %128: vector<16xf32>, %129: vector<16xf32>):
      %130 = arith.sub %84, %123 : i32
      %131 = wi.addptr %x, %123 : (ptr<f32>, i32) -> ptr<f32>
      %132 = wi.gvload %131, %130 : (ptr<f32>, i32) -> vector<16xf32>
      %133 = arith.add %124, %132 : vector<16xf32>
      %134 = arith.max %125, %132 {propagate_nan = false} : vector<16xf32>
      %135 = arith.min %126, %132 {propagate_nan = false} : vector<16xf32>
      %136 = arith.max %127, %132 {propagate_nan = true} : vector<16xf32>
      %137 = arith.min %128, %132 {propagate_nan = true} : vector<16xf32>
      %138 = arith.mul %129, %132 : vector<16xf32>
      %139 = wi.lane_ids : vector<16xi32>
      %140 = wi.broadcast %130 : (i32) -> vector<16xi32>
      %141 = arith.cmp %139, %140 {predicate = "lt"} : (vector<16xi32>, vector<16xi32>) -> vector<16xi1>
      %142 = arith.select %141, %133, %124 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      %143 = arith.select %141, %134, %125 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      %144 = arith.select %141, %135, %126 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      %145 = arith.select %141, %136, %127 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      %146 = arith.select %141, %137, %128 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      %147 = arith.select %141, %138, %129 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      scf.yield %142, %143, %144, %145, %146, %147 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
    }
    %148 = wi.vreduce %117 {kind = "add"} : (vector<16xf32>) -> f32
    %149 = arith.add %fz, %148 : f32
    %150 = wi.vreduce %118 {kind = "max", propagate_nan = false} : (vector<16xf32>) -> f32
    %151 = wi.vreduce %119 {kind = "min", propagate_nan = false} : (vector<16xf32>) -> f32
    %152 = wi.vreduce %120 {kind = "max", propagate_nan = true} : (vector<16xf32>) -> f32
    %153 = wi.vreduce %121 {kind = "min", propagate_nan = true} : (vector<16xf32>) -> f32
    %154 = wi.vreduce %122 {kind = "mul"} : (vector<16xf32>) -> f32
    %155 = arith.mul %fone, %154 : f32
    %156 = wi.broadcast %fone : (f32) -> vector<16xf32>
    %157 = arith.max %c128, %84 : i32
    %158 = arith.sub %157, %84 : i32
    %159 = arith.constant {value = 16} : i32
    %160 = arith.div %158, %159 : i32
    %161 = arith.mul %160, %159 : i32
    %162 = arith.add %84, %161 : i32
    %163 = arith.constant {value = -0.0} : f32
    %164 = wi.broadcast %163 : (f32) -> vector<16xf32>
    %165 = wi.broadcast %150 : (f32) -> vector<16xf32>
    %166 = wi.broadcast %151 : (f32) -> vector<16xf32>
    %167 = wi.broadcast %152 : (f32) -> vector<16xf32>
    %168 = wi.broadcast %153 : (f32) -> vector<16xf32>
    %169 = arith.constant {value = 1.0} : f32
    %170 = wi.broadcast %169 : (f32) -> vector<16xf32>
    %171, %172, %173, %174, %175, %176 = scf.for %84, %162, %159, %164, %165, %166, %167, %168, %170 : (i32, i32, i32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
    ^bb0(%177: i32, %178: vector<16xf32>, %179: vector<16xf32>, %180: vector<16xf32>, %181: vector<16xf32>, %182: vector<16xf32>, %183: vector<16xf32>):
      %184 = arith.add %178, %156 : vector<16xf32>
      %185 = arith.max %179, %156 {propagate_nan = false} : vector<16xf32>
      %186 = arith.min %180, %156 {propagate_nan = false} : vector<16xf32>
      %187 = arith.max %181, %156 {propagate_nan = true} : vector<16xf32>
      %188 = arith.min %182, %156 {propagate_nan = true} : vector<16xf32>
      %189 = arith.mul %183, %156 : vector<16xf32>
      scf.yield %184, %185, %186, %187, %188, %189 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
    }
    %190, %191, %192, %193, %194, %195 = scf.for %162, %157, %159, %171, %172, %173, %174, %175, %176 : (i32, i32, i32, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
    ^bb0(%196: i32, %197: vector<16xf32>, %198: vector<16xf32>, %199: vector<16xf32>, %200: vector<16xf32>, %201: vector<16xf32>, %202: vector<16xf32>):
      %203 = arith.sub %157, %196 : i32
      %204 = arith.add %197, %156 : vector<16xf32>
      %205 = arith.max %198, %156 {propagate_nan = false} : vector<16xf32>
      %206 = arith.min %199, %156 {propagate_nan = false} : vector<16xf32>
      %207 = arith.max %200, %156 {propagate_nan = true} : vector<16xf32>
      %208 = arith.min %201, %156 {propagate_nan = true} : vector<16xf32>
      %209 = arith.mul %202, %156 : vector<16xf32>
      %210 = wi.lane_ids : vector<16xi32>
      %211 = wi.broadcast %203 : (i32) -> vector<16xi32>
      %212 = arith.cmp %210, %211 {predicate = "lt"} : (vector<16xi32>, vector<16xi32>) -> vector<16xi1>
      %213 = arith.select %212, %204, %197 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      %214 = arith.select %212, %205, %198 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      %215 = arith.select %212, %206, %199 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      %216 = arith.select %212, %207, %200 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      %217 = arith.select %212, %208, %201 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      %218 = arith.select %212, %209, %202 : (vector<16xi1>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
      scf.yield %213, %214, %215, %216, %217, %218 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
    }
    %219 = wi.vreduce %190 {kind = "add"} : (vector<16xf32>) -> f32
    %220 = arith.add %149, %219 : f32
    %221 = wi.vreduce %191 {kind = "max", propagate_nan = false} : (vector<16xf32>) -> f32
    %222 = wi.vreduce %192 {kind = "min", propagate_nan = false} : (vector<16xf32>) -> f32
    %223 = wi.vreduce %193 {kind = "max", propagate_nan = true} : (vector<16xf32>) -> f32
    %224 = wi.vreduce %194 {kind = "min", propagate_nan = true} : (vector<16xf32>) -> f32
    %225 = wi.vreduce %195 {kind = "mul"} : (vector<16xf32>) -> f32
    %226 = arith.mul %155, %225 : f32
    wi.gstore %f, %220 : ptr<f32>, f32
    %f1 = wi.addptr %f, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f1, %221 : ptr<f32>, f32
    %f2 = wi.addptr %f1, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f2, %222 : ptr<f32>, f32
    %f3 = wi.addptr %f2, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f3, %223 : ptr<f32>, f32
    %f4 = wi.addptr %f3, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f4, %224 : ptr<f32>, f32
    %f5 = wi.addptr %f4, %c1 : (ptr<f32>, i32) -> ptr<f32>
    wi.gstore %f5, %226 : ptr<f32>, f32
    wi.return
  }
}
