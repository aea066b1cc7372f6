builtin.module {
  wi.func @gather_rows_kernel(%src: ptr<f32>, %idx: ptr<i64>, %out: ptr<f32>) attributes {divisibility = (1, 1, 1), local_bytes = 32, noalias = true, num_threads = 4} {
    %0 = wi.local_id : i32
    %1 = arith.constant {value = 0} : i32
    %2 = arith.constant {value = 4} : i32
    %3 = wi.alloc : memref<2xi32, private>
    %4 = arith.constant {value = 2} : i32
    %5 = arith.constant {value = 1} : i32
    %6 = wi.alloc : memref<2xf32, private>
    %7 = wi.alloc : memref<2xi64, private>
    %8 = arith.constant {value = 4} : u64
    %9 = arith.constant {value = 0.0} : f32
    %10 = wi.alloc : memref<8xf32, local>
    scf.for %1, %4, %5 : i32, i32, i32 {
    ^bb0(%11: i32):
      %12 = arith.mul %11, %2 : i32
      %13 = arith.add %12, %0 : i32
      %14 = arith.rem %13, %2 : i32
      %15 = arith.div %13, %2 : i32
      %16 = arith.mul %15, %2 : i32
      %17 = arith.add %16, %14 : i32
      wi.store %17, %3, %11 : i32, memref<2xi32, private>, i32
      %18 = wi.addptr %src, %17 : (ptr<f32>, i32) -> ptr<f32>
      %19 = wi.gload %18 : (ptr<f32>) -> f32
      wi.store %19, %6, %11 : f32, memref<2xf32, private>, i32
      %20 = wi.addptr %idx, %17 : (ptr<i64>, i32) -> ptr<i64>
      %21 = wi.gload %20 : (ptr<i64>) -> i64
      wi.store %21, %7, %11 : i64, memref<2xi64, private>, i32
      scf.yield
    }
    wi.barrier
    scf.for %1, %4, %5 : i32, i32, i32 {
    ^bb0(%22: i32):
      %23 = arith.mul %22, %2 : i32
      %24 = arith.add %23, %0 : i32
      %25 = wi.load %6, %22 : (memref<2xf32, private>, i32) -> f32
      wi.store %25, %10, %24 : f32, memref<8xf32, local>, i32
      scf.yield
    }
    wi.barrier
    scf.for %1, %4, %5 : i32, i32, i32 {
    ^bb0(%26: i32):
      %27 = arith.mul %26, %2 : i32
      %28 = arith.add %27, %0 : i32
      %29 = wi.load %3, %26 : (memref<2xi32, private>, i32) -> i32
      %30 = wi.addptr %out, %29 : (ptr<f32>, i32) -> ptr<f32>
      %31 = wi.load %7, %26 : (memref<2xi64, private>, i32) -> i64
      %32 = arith.cast %31 : (i64) -> u64
      %33 = arith.cmp %32, %8 {predicate = "lt"} : (u64, u64) -> i1
      %34 = arith.cast %32 : (u64) -> i32
      %35 = arith.div %28, %2 : i32
      %36 = arith.select %33, %34, %1 : (i1, i32, i32) -> i32
      %37 = arith.mul %35, %2 : i32
      %38 = arith.add %37, %36 : i32
      %39 = wi.load %10, %38 : (memref<8xf32, local>, i32) -> f32
      %40 = arith.select %33, %39, %9 : (i1, f32, f32) -> f32
      wi.gstore %30, %40 : ptr<f32>, f32
      scf.yield
    }
    wi.return
  }
}
