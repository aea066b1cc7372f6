// RUN: inline,canonicalize,cse,dce
// The default pipeline on frontend-shaped IR: helpers inlined, constants folded
// and shared, dead code gone.

tile.func @offsets(%pid: i32) -> (tile<128xi32>) {
  %block = arith.constant {value = 128} : i32
  %start = arith.mul %pid, %block : i32
  %r = tile.arange {end = 128, start = 0} : tile<128xi32>
  %s = tile.splat %start : (i32) -> tile<128xi32>
  %offs = arith.add %s, %r : tile<128xi32>
  tile.return %offs : tile<128xi32>
}
tile.func @add_kernel(%x: ptr<f32>, %y: ptr<f32>, %out: ptr<f32>, %n: i32) attributes {kernel = true} {
  %pid = tile.program_id {axis = 0} : i32
  %offs = tile.call %pid {callee = @offsets} : (i32) -> tile<128xi32>
  %offs2 = tile.call %pid {callee = @offsets} : (i32) -> tile<128xi32>
  %ns = tile.splat %n : (i32) -> tile<128xi32>
  %mask = arith.cmp %offs, %ns {predicate = "lt"} : (tile<128xi32>, tile<128xi32>) -> tile<128xi1>
  %xs = tile.splat %x : (ptr<f32>) -> tile<128xptr<f32>>
  %xp = tile.addptr %xs, %offs : (tile<128xptr<f32>>, tile<128xi32>) -> tile<128xptr<f32>>
  %xv = tile.load %xp, %mask : (tile<128xptr<f32>>, tile<128xi1>) -> tile<128xf32>
  %ys = tile.splat %y : (ptr<f32>) -> tile<128xptr<f32>>
  %yp = tile.addptr %ys, %offs2 : (tile<128xptr<f32>>, tile<128xi32>) -> tile<128xptr<f32>>
  %yv = tile.load %yp, %mask : (tile<128xptr<f32>>, tile<128xi1>) -> tile<128xf32>
  %unused = tile.load %yp, %mask : (tile<128xptr<f32>>, tile<128xi1>) -> tile<128xf32>
  %one = arith.constant {value = 1.0} : tile<128xf32>
  %yv1 = arith.mul %yv, %one : tile<128xf32>
  %sum = arith.add %xv, %yv1 : tile<128xf32>
  %os = tile.splat %out : (ptr<f32>) -> tile<128xptr<f32>>
  %op = tile.addptr %os, %offs : (tile<128xptr<f32>>, tile<128xi32>) -> tile<128xptr<f32>>
  tile.store %op, %sum, %mask : tile<128xptr<f32>>, tile<128xf32>, tile<128xi1>
  tile.return
}
// CHECK-NOT: @offsets
// CHECK: tile.func @add_kernel(%x: ptr<f32>, %y: ptr<f32>, %out: ptr<f32>, %n: i32) attributes {kernel = true} {
// CHECK-NEXT: %pid = tile.program_id {axis = 0} : i32
// CHECK-NEXT: %block = arith.constant {value = 128} : i32
// CHECK-NEXT: %start = arith.mul %pid, %block : i32
// CHECK-NEXT: %r = tile.arange {end = 128, start = 0} : tile<128xi32>
// CHECK-NEXT: %s = tile.splat %start : (i32) -> tile<128xi32>
// CHECK-NEXT: %offs = arith.add %s, %r : tile<128xi32>
// CHECK-NEXT: %ns = tile.splat %n : (i32) -> tile<128xi32>
// CHECK-NEXT: %mask = arith.cmp %offs, %ns {predicate = "lt"}
// CHECK-NEXT: %xs = tile.splat %x
// CHECK-NEXT: %xp = tile.addptr %xs, %offs
// CHECK-NEXT: %xv = tile.load %xp, %mask
// CHECK-NEXT: %ys = tile.splat %y
// CHECK-NEXT: %yp = tile.addptr %ys, %offs
// CHECK-NEXT: %yv = tile.load %yp, %mask
// CHECK-NEXT: %sum = arith.add %xv, %yv : tile<128xf32>
// CHECK-NEXT: %os = tile.splat %out
// CHECK-NEXT: %op = tile.addptr %os, %offs
// CHECK-NEXT: tile.store %op, %sum, %mask
// CHECK-NEXT: tile.return
