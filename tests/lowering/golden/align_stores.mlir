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
      %22 = arith.min %20, %21 : i32
      %23 = arith.add %0, %22 : i32
      %24 = arith.sub %15, %23 : i32
      %25 = arith.div %24, %16 : i32
      %26 = arith.mul %25, %16 : i32
      %27 = arith.add %23, %26 : i32
      scf.for %0, %23, %16 : i32, i32, i32 {
      ^bb0(%28: i32):
        %29 = arith.sub %23, %28 : i32
        %30 = wi.addptr %9, %28 : (ptr<f32>, i32) -> ptr<f32>
        %31 = wi.gvload %30, %29 : (ptr<f32>, i32) -> vector<16xf32>
        %32 = wi.addptr %11, %28 : (ptr<f32>, i32) -> ptr<f32>
        %33 = arith.mul %31, %12 : vector<16xf32>
        %34 = arith.sub %33, %13 : vector<16xf32>
        wi.gvstore %32, %34, %29 {nontemporal = true} : ptr<f32>, vector<16xf32>, i32
        scf.yield
      }
      scf.for %23, %27, %16 : i32, i32, i32 {
      ^bb0(%35: i32):
        %36 = wi.addptr %9, %35 : (ptr<f32>, i32) -> ptr<f32>
        %37 = wi.gvload %36 : (ptr<f32>) -> vector<16xf32>
        %38 = wi.addptr %11, %35 : (ptr<f32>, i32) -> ptr<f32>
        %39 = arith.mul %37, %12 : vector<16xf32>
        %40 = arith.sub %39, %13 : vector<16xf32>
        wi.gvstore %38, %40 {nontemporal = true} : ptr<f32>, vector<16xf32>
        scf.yield
      }
      scf.for %27, %15, %16 : i32, i32, i32 {
      ^bb0(%41: i32):
        %42 = arith.sub %15, %41 : i32
        %43 = wi.addptr %9, %41 : (ptr<f32>, i32) -> ptr<f32>
        %44 = wi.gvload %43, %42 : (ptr<f32>, i32) -> vector<16xf32>
        %45 = wi.addptr %11, %41 : (ptr<f32>, i32) -> ptr<f32>
        %46 = arith.mul %44, %12 : vector<16xf32>
        %47 = arith.sub %46, %13 : vector<16xf32>
        wi.gvstore %45, %47, %42 {nontemporal = true} : ptr<f32>, vector<16xf32>, i32
        scf.yield
      }
      scf.yield
    }
    wi.return
  }
}
