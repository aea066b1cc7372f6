builtin.module {
  wi.func @add_kernel(%x: ptr<f32>, %y: ptr<f32>, %out: ptr<f32>, %n: i32) attributes {divisibility = (1, 1, 1, 1), local_bytes = 0, noalias = true, num_threads = 4} {
    %0 = wi.local_id : i32
    %1 = wi.program_id {axis = 0} : i32
    %2 = arith.constant {value = 64} : i32
    %3 = arith.constant {value = 0} : i32
    %4 = arith.constant {value = 16} : i32
    %5 = arith.constant {value = 1} : i32
    %6 = arith.constant {value = 2} : i32
    %7 = arith.constant {value = 4} : i32
    %8 = arith.mul %1, %2 : i32
    scf.for %3, %4, %5 : i32, i32, i32 {
    ^bb0(%9: i32):
      %10 = arith.div %9, %6 : i32
      %11 = arith.rem %9, %6 : i32
      %12 = arith.mul %10, %7 : i32
      %13 = arith.add %12, %0 : i32
      %14 = arith.mul %13, %6 : i32
      %15 = arith.add %14, %11 : i32
      %16 = arith.add %8, %15 : i32
      %17 = wi.addptr %x, %16 : (ptr<f32>, i32) -> ptr<f32>
      %18 = arith.cmp %16, %n {predicate = "lt"} : (i32, i32) -> i1
      %19 = wi.gload %17, %18 : (ptr<f32>, i1) -> f32
      %20 = wi.addptr %y, %16 : (ptr<f32>, i32) -> ptr<f32>
      %21 = wi.gload %20, %18 : (ptr<f32>, i1) -> f32
      %22 = wi.addptr %out, %16 : (ptr<f32>, i32) -> ptr<f32>
      %23 = arith.add %19, %21 : f32
      wi.gstore %22, %23, %18 : ptr<f32>, f32, i1
      scf.yield
    }
    wi.return
  }
}
