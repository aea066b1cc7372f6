// Golden round-trip for the wi (work-item) dialect, incl. memref types and the function form of wi.func.
builtin.module {
  wi.func @wi_kernel(%x_ptr: ptr<f32>, %n: i32) attributes {asserts = (("x must be positive", "k.py", 7, 5)), divisibility = (16, 1), local_bytes = 256, num_threads = 64} {
    %pid = wi.program_id {axis = 0} : i32
    %0 = wi.num_programs {axis = 1} : i32
    %lid = wi.local_id : i32
    %acc = wi.alloc : memref<4xf32, private>
    %1 = wi.alloc : memref<64xf32, local>
    %2 = arith.add %pid, %lid : i32
    %3 = wi.addptr %x_ptr, %2 : (ptr<f32>, i32) -> ptr<f32>
    %4 = arith.cmp %lid, %n {predicate = "lt"} : (i32, i32) -> i1
    %5 = wi.gload %3 : (ptr<f32>) -> f32
    %6 = wi.gload %3, %4 : (ptr<f32>, i1) -> f32
    %x = wi.gload %3, %4, %6 : (ptr<f32>, i1, f32) -> f32
    wi.store %x, %acc, %lid : f32, memref<4xf32, private>, i32
    %7 = wi.load %acc, %lid : (memref<4xf32, private>, i32) -> f32
    wi.store %7, %1, %lid : f32, memref<64xf32, local>, i32
    wi.barrier
    %8 = arith.constant {value = 0} : i32
    %9 = wi.load %1, %8 : (memref<64xf32, local>, i32) -> f32
    wi.gstore %3, %9, %4 : ptr<f32>, f32, i1
    wi.gstore %3, %9 : ptr<f32>, f32
    wi.prefetch %3 : ptr<f32>
    %gap = wi.align_gap %3 {bytes = 64} : (ptr<f32>) -> i32
    %10 = wi.atomic_rmw %3, %9 {kind = "add"} : (ptr<f32>, f32) -> f32
    %11 = wi.atomic_rmw %3, %9, %4 {kind = "max", scope = "gpu", sem = "relaxed"} : (ptr<f32>, f32, i1) -> f32
    %12 = wi.atomic_cas %3, %9, %x {sem = "acquire"} : (ptr<f32>, f32, f32) -> f32
    wi.print %pid, %x {format = "pid %d x %f\n"} : i32, f32
    wi.print {format = ""}
    %13 = arith.cmp %x, %9 {predicate = "gt"} : (f32, f32) -> i1
    wi.assert %13 {id = 1} : i1
    wi.return
  }
}
