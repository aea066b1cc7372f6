builtin.module {
  wi.func @add_kernel(%x: ptr<f32>, %y: ptr<f32>, %out: ptr<f32>, %n: i32) attributes {divisibility = (1, 1, 1, 1), local_bytes = 0, noalias = true, num_threads = 1} {
    %0 = arith.constant {value = 0} : i32
    %1 = wi.program_id {axis = 0} : i32
    %2 = arith.constant {value = 64} : i32
    %3 = arith.constant {value = 1} : i32
    %4 = arith.mul %1, %2 : i32
    scf.for %0, %2, %3 : i32, i32, i32 {
    ^bb0(%5: i32):
      %6 = arith.add %4, %5 : i32
      %7 = wi.addptr %x, %6 : (ptr<f32>, i32) -> ptr<f32>
      %8 = arith.cmp %6, %n {predicate = "lt"} : (i32, i32) -> i1
      %9 = wi.gload %7, %8 : (ptr<f32>, i1) -> f32
      %10 = wi.addptr %y, %6 : (ptr<f32>, i32) -> ptr<f32>
      %11 = wi.gload %10, %8 : (ptr<f32>, i1) -> f32
      %12 = wi.addptr %out, %6 : (ptr<f32>, i32) -> ptr<f32>
      %13 = arith.add %9, %11 : f32
      wi.gstore %12, %13, %8 : ptr<f32>, f32, i1
      scf.yield
    }
    wi.return
  }
}
