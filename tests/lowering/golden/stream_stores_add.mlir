builtin.module {
  wi.func @add(%x_ptr: ptr<f32>, %y_ptr: ptr<f32>, %out_ptr: ptr<f32>, %n: i32) attributes {divisibility = (1, 1, 1, 1), local_bytes = 0, noalias = true, num_threads = 1} {
    %0 = arith.constant {value = 0} : i32
    %1 = wi.program_id {axis = 0} : i32
    %2 = arith.constant {value = 64} : i32
    %3 = arith.constant {value = 1} : i32
    %4 = arith.mul %1, %2 : i32
    %5 = arith.sub %n, %4 : i32
    %6 = arith.min %2, %5 : i32
    %7 = arith.max %6, %0 : i32
    %8 = arith.constant {value = 16} : i32
    %9 = arith.div %7, %8 : i32
    %10 = arith.mul %9, %8 : i32
    scf.for %0, %10, %8 : i32, i32, i32 {
    ^bb0(%11: i32):
      %12 = arith.add %4, %11 : i32
      %13 = wi.addptr %x_ptr, %12 : (ptr<f32>, i32) -> ptr<f32>
      %14 = wi.gvload %13 : (ptr<f32>) -> vector<16xf32>
      %15 = wi.addptr %y_ptr, %12 : (ptr<f32>, i32) -> ptr<f32>
      %16 = wi.gvload %15 : (ptr<f32>) -> vector<16xf32>
      %17 = wi.addptr %out_ptr, %12 : (ptr<f32>, i32) -> ptr<f32>
      %18 = arith.add %14, %16 : vector<16xf32>
      wi.gvstore %17, %18 {nontemporal = true} : ptr<f32>, vector<16xf32>
      scf.yield
    }
    scf.for %10, %7, %8 : i32, i32, i32 {
    ^bb0(%19: i32):
      %20 = arith.sub %7, %19 : i32
      %21 = arith.add %4, %19 : i32
      %22 = wi.addptr %x_ptr, %21 : (ptr<f32>, i32) -> ptr<f32>
      %23 = wi.gvload %22, %20 : (ptr<f32>, i32) -> vector<16xf32>
      %24 = wi.addptr %y_ptr, %21 : (ptr<f32>, i32) -> ptr<f32>
      %25 = wi.gvload %24, %20 : (ptr<f32>, i32) -> vector<16xf32>
      %26 = wi.addptr %out_ptr, %21 : (ptr<f32>, i32) -> ptr<f32>
      %27 = arith.add %23, %25 : vector<16xf32>
      wi.gvstore %26, %27, %20 {nontemporal = true} : ptr<f32>, vector<16xf32>, i32
      scf.yield
    }
    wi.return
  }
}
