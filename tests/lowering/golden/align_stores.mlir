builtin.module {
  wi.func @scale_rows(%o: ptr<f32>, %x: ptr<f32>, %n_rows: i32, %n_cols: i32, %x_stride: i32, %o_stride: i32) attributes {divisibility = (1, 1, 1, 1, 1, 1), local_bytes = 0, noalias = true, num_threads = 1} {
    %0 = arith.constant {value = 0} : i32
    %1 = wi.program_id {axis = 0} : i32
    %2 = wi.num_programs {axis = 0} : i32
    %3 = arith.constant {value = 64} : i32
    %4 = arith.constant {value = 1} : i32
    %5 = arith.constant {value = 3.0} : f32
    %6 = arith.constant {value = 1.0} : f32
    scf.for %1, %n_rows, %2 : i32, i32, i32 {
    ^bb0(%7: i32):
      %8 = arith.mul %7, %x_stride : i32
      %9 = wi.addptr %x, %8 : (ptr<f32>, i32) -> ptr<f32>
      %10 = arith.mul %7, %o_stride : i32
      %11 = wi.addptr %o, %10 : (ptr<f32>, i32) -> ptr<f32>
      %12 = wi.broadcast %5 : (f32) -> vector<16xf32>
      %13 = wi.broadcast %6 : (f32) -> vector<16xf32>
      %14 = arith.min %3, %n_cols : i32
      %15 = arith.max %14, %0 : i32
      %16 = arith.constant {value = 16} : i32
      %17 = arith.div %15, %16 : i32
      %18 = arith.mul %17, %16 : i32
      %19 = wi.addptr %11, %0 : (ptr<f32>, i32) -> ptr<f32>
      %20 = wi.align_gap %19 {bytes = 64} : (ptr<f32>) -> i32
      %21 = arith.sub %15, %0 : i32
      %22 = arith.constant {value = 0} : i32
      %23 = arith.min %20, %21 : i32
      %24 = arith.max %23, %22 : i32
      %25 = arith.add %0, %24 : i32
      %26 = arith.sub %15, %25 : i32
      %27 = arith.div %26, %16 : i32
      %28 = arith.mul %27, %16 : i32
      %29 = arith.add %25, %28 : i32
      scf.for %0, %25, %16 : i32, i32, i32 {
      ^bb0(%30: i32):
        %31 = arith.sub %25, %30 : i32
        %32 = wi.addptr %9, %30 : (ptr<f32>, i32) -> ptr<f32>
        %33 = wi.gvload %32, %31 : (ptr<f32>, i32) -> vector<16xf32>
        %34 = wi.addptr %11, %30 : (ptr<f32>, i32) -> ptr<f32>
        %35 = arith.mul %33, %12 : vector<16xf32>
        %36 = arith.sub %35, %13 : vector<16xf32>
        wi.gvstore %34, %36, %31 {nontemporal = true} : ptr<f32>, vector<16xf32>, i32
        scf.yield
      }
      scf.for %25, %29, %16 : i32, i32, i32 {
      ^bb0(%37: i32):
        %38 = wi.addptr %9, %37 : (ptr<f32>, i32) -> ptr<f32>
        %39 = wi.gvload %38 : (ptr<f32>) -> vector<16xf32>
        %40 = wi.addptr %11, %37 : (ptr<f32>, i32) -> ptr<f32>
        %41 = arith.mul %39, %12 : vector<16xf32>
        %42 = arith.sub %41, %13 : vector<16xf32>
        wi.gvstore %40, %42 {nontemporal = true} : ptr<f32>, vector<16xf32>
        scf.yield
      }
      scf.for %29, %15, %16 : i32, i32, i32 {
      ^bb0(%43: i32):
        %44 = arith.sub %15, %43 : i32
        %45 = wi.addptr %9, %43 : (ptr<f32>, i32) -> ptr<f32>
        %46 = wi.gvload %45, %44 : (ptr<f32>, i32) -> vector<16xf32>
        %47 = wi.addptr %11, %43 : (ptr<f32>, i32) -> ptr<f32>
        %48 = arith.mul %46, %12 : vector<16xf32>
        %49 = arith.sub %48, %13 : vector<16xf32>
        wi.gvstore %47, %49, %44 {nontemporal = true} : ptr<f32>, vector<16xf32>, i32
        scf.yield
      }
      scf.yield
    }
    wi.return
  }
}
