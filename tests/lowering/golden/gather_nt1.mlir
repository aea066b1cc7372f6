builtin.module {
  wi.func @gather_rows_kernel(%src: ptr<f32>, %idx: ptr<i64>, %out: ptr<f32>) attributes {divisibility = (1, 1, 1), local_bytes = 0, noalias = true, num_threads = 1} {
    %0 = arith.constant {value = 0} : i32
    %1 = arith.constant {value = 4} : i32
    %2 = wi.alloc : memref<8xf32, private>
    %3 = arith.constant {value = 8} : i32
    %4 = arith.constant {value = 1} : i32
    %5 = wi.alloc : memref<8xi64, private>
    %6 = arith.constant {value = 4} : u64
    %7 = arith.constant {value = 0.0} : f32
    scf.for %0, %3, %4 : i32, i32, i32 {
    ^bb0(%8: i32):
      %9 = arith.rem %8, %1 : i32
      %10 = arith.div %8, %1 : i32
      %11 = arith.mul %10, %1 : i32
      %12 = arith.add %11, %9 : i32
      %13 = wi.addptr %src, %12 : (ptr<f32>, i32) -> ptr<f32>
      %14 = wi.gload %13 : (ptr<f32>) -> f32
      wi.store %14, %2, %8 : f32, memref<8xf32, private>, i32
      %15 = wi.addptr %idx, %12 : (ptr<i64>, i32) -> ptr<i64>
      %16 = wi.gload %15 : (ptr<i64>) -> i64
      wi.store %16, %5, %8 : i64, memref<8xi64, private>, i32
      scf.yield
    }
    scf.for %0, %3, %4 : i32, i32, i32 {
    ^bb0(%17: i32):
      %18 = arith.rem %17, %1 : i32
      %19 = arith.div %17, %1 : i32
      %20 = arith.mul %19, %1 : i32
      %21 = arith.add %20, %18 : i32
      %22 = wi.addptr %out, %21 : (ptr<f32>, i32) -> ptr<f32>
      %23 = wi.load %5, %17 : (memref<8xi64, private>, i32) -> i64
      %24 = arith.cast %23 : (i64) -> u64
      %25 = arith.cmp %24, %6 {predicate = "lt"} : (u64, u64) -> i1
      %26 = arith.cast %24 : (u64) -> i32
      %27 = arith.select %25, %26, %0 : (i1, i32, i32) -> i32
      %28 = arith.mul %19, %1 : i32
      %29 = arith.add %28, %27 : i32
      %30 = wi.load %2, %29 : (memref<8xf32, private>, i32) -> f32
      %31 = arith.select %25, %30, %7 : (i1, f32, f32) -> f32
      wi.gstore %22, %31 : ptr<f32>, f32
      scf.yield
    }
    wi.return
  }
}
