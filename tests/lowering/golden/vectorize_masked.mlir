// before
builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %pid = wi.program_id {axis = 0} : i32
    %base = arith.mul %pid, %c64 : i32
    scf.for %c0, %c64, %c1 : i32, i32, i32 {
    ^bb0(%s: i32):
      %i = arith.add %base, %s : i32
      %p = wi.addptr %x, %i : (ptr<f32>, i32) -> ptr<f32>
      %m = arith.cmp %i, %n {predicate = "lt"} : (i32, i32) -> i1
      %v = wi.gload %p, %m : (ptr<f32>, i1) -> f32
      %w = math.exp %v : f32
      %q = wi.addptr %y, %i : (ptr<f32>, i32) -> ptr<f32>
      wi.gstore %q, %w, %m : ptr<f32>, f32, i1
      scf.yield
    }
    wi.return
  }
}
// after
builtin.module {
  wi.func @k(%x: ptr<f32>, %y: ptr<f32>, %n: i32) attributes {num_threads = 1} {
    %c0 = arith.constant {value = 0} : i32
    %c1 = arith.constant {value = 1} : i32
    %c64 = arith.constant {value = 64} : i32
    %pid = wi.program_id {axis = 0} : i32
    %base = arith.mul %pid, %c64 : i32
    %0 = arith.sub %n, %base : i32
    %1 = arith.min %c64, %0 : i32
    %2 = arith.max %1, %c0 : i32
    %3 = arith.constant {value = 16} : i32
    %4 = arith.div %2, %3 : i32
    %5 = arith.mul %4, %3 : i32
    scf.for %c0, %5, %3 : i32, i32, i32 {
    ^bb0(%6: i32):
      %7 = arith.add %base, %6 : i32
      %8 = wi.addptr %x, %7 : (ptr<f32>, i32) -> ptr<f32>
      %9 = wi.gvload %8 : (ptr<f32>) -> vector<16xf32>
      %10 = math.exp %9 : vector<16xf32>
      %11 = wi.addptr %y, %7 : (ptr<f32>, i32) -> ptr<f32>
      wi.gvstore %11, %10 : ptr<f32>, vector<16xf32>
      scf.yield
    }
    scf.for %5, %2, %3 : i32, i32, i32 {
    ^bb0(%12: i32):
      %13 = arith.sub %2, %12 : i32
      %14 = arith.add %base, %12 : i32
      %15 = wi.addptr %x, %14 : (ptr<f32>, i32) -> ptr<f32>
      %16 = wi.gvload %15, %13 : (ptr<f32>, i32) -> vector<16xf32>
      %17 = math.exp %16 : vector<16xf32>
      %18 = wi.addptr %y, %14 : (ptr<f32>, i32) -> ptr<f32>
      wi.gvstore %18, %17, %13 : ptr<f32>, vector<16xf32>, i32
      scf.yield
    }
    wi.return
  }
}
