// RUN: fp8-to-bytes
// fp8 values become their bytes: pointers, tiles, region arguments and attribute types are
// retyped as u8; a bitcast between an fp8 value and its u8 byte disappears, one to i8 stays.

tile.func @carried(%x: ptr<fp8e5>, %y: ptr<fp8e5>, %n: i32) {
  %offs = tile.arange {end = 4, start = 0} : tile<4xi32>
  %0 = tile.splat %x : (ptr<fp8e5>) -> tile<4xptr<fp8e5>>
  %1 = tile.addptr %0, %offs : (tile<4xptr<fp8e5>>, tile<4xi32>) -> tile<4xptr<fp8e5>>
  %acc = tile.load %1 : (tile<4xptr<fp8e5>>) -> tile<4xfp8e5>
  %c0 = arith.constant {value = 0} : i32
  %c1 = arith.constant {value = 1} : i32
  %r = scf.for %c0, %n, %c1, %acc : (i32, i32, i32, tile<4xfp8e5>) -> tile<4xfp8e5> {
  ^bb0(%i: i32, %a: tile<4xfp8e5>):
    %s = tile.splat %i : (i32) -> tile<4xi32>
    %m = arith.cmp %offs, %s {predicate = "lt"} : (tile<4xi32>, tile<4xi32>) -> tile<4xi1>
    %b = tile.load %1 : (tile<4xptr<fp8e5>>) -> tile<4xfp8e5>
    %sel = arith.select %m, %a, %b : (tile<4xi1>, tile<4xfp8e5>, tile<4xfp8e5>) -> tile<4xfp8e5>
    scf.yield %sel : tile<4xfp8e5>
  }
  %2 = tile.splat %y : (ptr<fp8e5>) -> tile<4xptr<fp8e5>>
  %3 = tile.addptr %2, %offs : (tile<4xptr<fp8e5>>, tile<4xi32>) -> tile<4xptr<fp8e5>>
  tile.store %3, %r : tile<4xptr<fp8e5>>, tile<4xfp8e5>
  tile.return
}
// CHECK: tile.func @carried(%x: ptr<u8>, %y: ptr<u8>, %n: i32)
// CHECK: %acc = tile.load %1 : (tile<4xptr<u8>>) -> tile<4xu8>
// CHECK: %r = scf.for %c0, %n, %c1, %acc : (i32, i32, i32, tile<4xu8>) -> tile<4xu8> {
// CHECK-NEXT: ^bb0(%i: i32, %a: tile<4xu8>):
// CHECK: %sel = arith.select %m, %a, %b : (tile<4xi1>, tile<4xu8>, tile<4xu8>) -> tile<4xu8>
// CHECK: tile.store %3, %r : tile<4xptr<u8>>, tile<4xu8>

// -----

tile.func @bytes(%x: u8, %y: i8) -> (fp8e4nv, i8) {
  %a = arith.bitcast %x : (u8) -> fp8e4nv
  %b = arith.bitcast %y : (i8) -> fp8e4nv
  %c = arith.bitcast %b : (fp8e4nv) -> i8
  tile.return %a, %c : fp8e4nv, i8
}
// CHECK: tile.func @bytes(%x: u8, %y: i8) -> (u8, i8)
// CHECK-NEXT: %b = arith.bitcast %y : (i8) -> u8
// CHECK-NEXT: %c = arith.bitcast %b : (u8) -> i8
// CHECK-NEXT: tile.return %x, %c : u8, i8
