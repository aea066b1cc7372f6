// Invalid IR: each case (separated by "// -----") must fail to parse or verify
// with exactly the diagnostic given by the expected-error line, which applies
// to the line N below it (@+N). Line numbers are those of this file.

// -----
tile.func @f(%a: f32) -> (f32) {
  // expected-error@+1 {{use of undefined value %b}}
  %0 = arith.add %a, %b : f32
  tile.return %0 : f32
}

// -----
tile.func @f(%a: f32) {
  %x = arith.neg %a : f32
  // expected-error@+1 {{redefinition of value %x (first defined at invalid.mlir:14:3)}}
  %x = arith.neg %a : f32
  tile.return
}

// -----
tile.func @f(%a: f32) {
  // expected-error@+1 {{unknown operation 'arith.addf'}}
  %0 = arith.addf %a, %a : f32
  tile.return
}

// -----
tile.func @f(%a: f32) {
  // expected-error@+1 {{'arith.add' op expects 2 operands, got 3}}
  %0 = arith.add %a, %a, %a : f32
  tile.return
}

// -----
tile.func @f(%a: f32, %b: i32) {
  // expected-error@+1 {{operand %b has type i32 but the signature of 'arith.add' says f32}}
  %0 = arith.add %a, %b : f32
  tile.return
}

// -----
tile.func @f(%a: f32) {
  // expected-error@+1 {{'arith.add' has 2 operands but its signature gives 1 type}}
  %0 = arith.add %a, %a : (f32) -> f32
  tile.return
}

// -----
tile.func @f(%a: tile<16x32xf32>, %b: tile<16x32xf32>, %c: tile<16x16xf32>) {
  // expected-error@+1 {{'tile.dot' op incompatible dot shapes (16, 32) x (16, 32) -> (16, 16)}}
  %0 = tile.dot %a, %b, %c : (tile<16x32xf32>, tile<16x32xf32>, tile<16x16xf32>) -> tile<16x16xf32>
  tile.return
}

// -----
tile.func @f(%a: tile<16x16xf16>, %b: tile<16x16xf16>, %c: tile<16x16xi32>) {
  // expected-error@+1 {{'tile.dot' op unsupported dot input/accumulator types f16/i32}}
  %0 = tile.dot %a, %b, %c : (tile<16x16xf16>, tile<16x16xf16>, tile<16x16xi32>) -> tile<16x16xi32>
  tile.return
}

// -----
tile.func @f(%p: tile<128xptr<f32>>, %m: tile<64xi1>) {
  // expected-error@+1 {{'tile.load' op mask shape (64,) differs from pointer shape (128,)}}
  %0 = tile.load %p, %m : (tile<128xptr<f32>>, tile<64xi1>) -> tile<128xf32>
  tile.return
}

// -----
tile.func @f(%p: tile<128xptr<f32>>, %v: tile<128xf32>, %m: tile<128xi32>) {
  // expected-error@+1 {{'tile.store' op expects an i1 condition, got tile<128xi32>}}
  tile.store %p, %v, %m : tile<128xptr<f32>>, tile<128xf32>, tile<128xi32>
  tile.return
}

// -----
tile.func @f(%n: i32, %x: f32) {
  %c0 = arith.constant {value = 0} : i32
  %c1 = arith.constant {value = 1} : i32
  // expected-error@+1 {{'scf.for' op region yields (i32) but (f32) is expected}}
  %r = scf.for %c0, %n, %c1, %x : (i32, i32, i32, f32) -> f32 {
  ^bb0(%i: i32, %acc: f32):
    scf.yield %i : i32
  }
  tile.return
}

// -----
tile.func @f(%n: i32) {
  // expected-error@+1 {{'scf.if' op expects an i1 condition, got i32}}
  scf.if %n : i32 {
    scf.yield
  } {
    scf.yield
  }
  tile.return
}

// -----
tile.func @f(%c: tile<4xi1>) {
  // expected-error@+1 {{'scf.if' op condition must be a scalar i1, got tile<4xi1>}}
  scf.if %c : tile<4xi1> {
    scf.yield
  } {
    scf.yield
  }
  tile.return
}

// -----
tile.func @f() {
  // expected-error@+1 {{'tile.program_id' op unknown attribute 'dim'}}
  %0 = tile.program_id {axis = 0, dim = 1} : i32
  tile.return
}

// -----
tile.func @f() {
  // expected-error@+1 {{'tile.program_id' op requires attribute 'axis'}}
  %0 = tile.program_id : i32
  tile.return
}

// -----
tile.func @f() {
  // expected-error@+1 {{'tile.program_id' op attribute 'axis' has invalid value '0'}}
  %0 = tile.program_id {axis = "0"} : i32
  tile.return
}

// -----
tile.func @f() {
  // expected-error@+1 {{'tile.arange' op result must be tile<64xi32>, got tile<128xi32>}}
  %0 = tile.arange {end = 64, start = 0} : tile<128xi32>
  tile.return
}

// -----
tile.func @f(%x: tile<4x8xf32>) {
  // expected-error@+1 {{'tile.permute' op order (0, 0) is not a permutation of rank 2}}
  %0 = tile.permute %x {order = (0, 0)} : (tile<4x8xf32>) -> tile<4x8xf32>
  tile.return
}

// -----
tile.func @f(%x: f32) {
  // expected-error@+1 {{'tile.call' op calls unknown function '@g'}}
  %0 = tile.call %x {callee = @g} : f32
  tile.return
}

// -----
tile.func @g(%x: f32) -> (f32) {
  tile.return %x : f32
}
tile.func @f(%x: i32) {
  // expected-error@+1 {{'tile.call' op call argument types (i32) do not match '@g' (f32)}}
  %0 = tile.call %x {callee = @g} : (i32) -> f32
  tile.return
}

// -----
tile.func @g() {
  tile.return
}
// expected-error@+1 {{'tile.func' op redefinition of symbol '@g'}}
tile.func @g() {
  tile.return
}

// -----
// expected-error@+1 {{'tile.func' op body must end in tile.return}}
tile.func @f(%x: f32) {
  %0 = arith.neg %x : f32
}

// -----
tile.func @f(%x: f32) -> (f32) {
  // expected-error@+1 {{'tile.return' op terminator must be the last op of its block}}
  tile.return %x : f32
  %0 = arith.neg %x : f32
}

// -----
// expected-error@+1 {{'tile.func' op returns (i32) but is declared to return (f32)}}
tile.func @f(%x: i32) -> (f32) {
  tile.return %x : i32
}

// -----
tile.func @f(%x: f32) {
  %y = arith.neg %x : f32
  tile.func @inner() {
    // expected-error@+1 {{value %y is defined outside the isolated-from-above op that uses it}}
    %z = arith.neg %y : f32
    tile.return
  }
  tile.return
}

// -----
tile.func @f() {
  // expected-error@+1 {{'arith.constant' op value 300 out of range for u8}}
  %0 = arith.constant {value = 300} : u8
  tile.return
}

// -----
tile.func @f() {
  // expected-error@+1 {{'arith.constant' op integer constant of type i32 has float value 1.5}}
  %0 = arith.constant {value = 1.5} : i32
  tile.return
}

// -----
tile.func @f(%x: tile<16xf32>) {
  // expected-error@+1 {{'tile.reduce' op combiner must yield one scalar per input}}
  %0 = tile.reduce %x {axis = 0} : (tile<16xf32>) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %c = arith.cmp %a, %b {predicate = "lt"} : (f32, f32) -> i1
    scf.yield %c : i1
  }
  tile.return
}

// -----
tile.func @f(%x: tile<16xf32>) {
  // expected-error@+1 {{'tile.reduce' op axis 1 out of range for rank 1}}
  %0 = tile.reduce %x {axis = 1} : (tile<16xf32>) -> f32 {
  ^bb0(%a: f32, %b: f32):
    scf.yield %a : f32
  }
  tile.return
}

// -----
tile.func @f(%n: i32) {
  // expected-error@+1 {{'scf.while' op before region must end in scf.condition}}
  %0 = scf.while %n : i32 {
  ^bb0(%a: i32):
    scf.yield %a : i32
  } {
  ^bb0(%b: i32):
    scf.yield %b : i32
  }
  tile.return
}

// -----
tile.func @f(%x: tile<8xf32>) {
  // expected-error@+1 {{'tile.split' op last dimension must be 2, got tile<8xf32>}}
  %a, %b = tile.split %x : (tile<8xf32>) -> (tile<4xf32>, tile<4xf32>)
  tile.return
}

// -----
tile.func @f(%x: tile<8xf32>) {
  // expected-error@+1 {{'tile.broadcast' op cannot broadcast tile<8xf32> to tile<4x8xf32>}}
  %0 = tile.broadcast %x : (tile<8xf32>) -> tile<4x8xf32>
  tile.return
}

// -----
tile.func @f(%p: tile<4xptr<f32>>, %v: tile<4xf32>) {
  // expected-error@+1 {{'tile.atomic_rmw' op unknown atomic kind 'mul'}}
  %0 = tile.atomic_rmw %p, %v {kind = "mul"} : (tile<4xptr<f32>>, tile<4xf32>) -> tile<4xf32>
  tile.return
}

// -----
tile.func @f(%x: f32) {
  // expected-error@+1 {{'arith.cmp' op unknown predicate 'less'}}
  %0 = arith.cmp %x, %x {predicate = "less"} : (f32, f32) -> i1
  tile.return
}

// -----
tile.func @f(%x: f32) {
  // expected-error@+1 {{'arith.and' op expects an integer type, got f32}}
  %0 = arith.and %x, %x : f32
  tile.return
}

// -----
tile.func @f() {
  // expected-error@+1 {{unknown attribute value syntax 'foo'}}
  %0 = tile.program_id {axis = foo} : i32
  tile.return
}

// -----
tile.func @f() {
  // expected-error@+1 {{duplicate attribute 'axis'}}
  %0 = tile.program_id {axis = 0, axis = 1} : i32
  tile.return
}

// -----
tile.func @f(%x: f32) {
  // expected-error@+1 {{expected ':' and the types of 'arith.neg', got 'tile.return'}}
  %0 = arith.neg %x
  tile.return
}

// -----
// expected-error@+1 {{unknown type 'f31'}}
tile.func @f(%x: f31) {
  tile.return
}

// -----
// expected-error@+1 {{expected '>' to close the type}}
tile.func @f(%x: tile<4xf32) {
  tile.return
}

// -----
tile.func @f() {
  // expected-error@+1 {{unterminated string literal}}
  tile.print {prefix = "abc}
  tile.return
}

// -----
tile.func @f() {
  // expected-error@+1 {{unknown escape '\q' in string}}
  tile.print {prefix = "a\qb"}
  tile.return
}

// -----
tile.func @f(%x: f32) {
  // expected-error@+1 {{expected an operation name, got '='}}
  %0 = = arith.neg %x : f32
  tile.return
}

// -----
tile.func @f(%x: f32) {
  // expected-error@+1 {{unexpected character '!'}}
  %0 = arith.neg !x : f32
  tile.return
}


// -----
tile.func @f(%x: f32) {
  // expected-error@+1 {{'arith.neg' has 2 results but its signature gives 1 type}}
  %0, %1 = arith.neg %x : (f32) -> (f32)
  tile.return
}

// -----
tile.func @f(%x: tile<8x2xf32>) {
  // expected-error@+1 {{'tile.split' op expects 2 results, got 1}}
  %a = tile.split %x : (tile<8x2xf32>) -> tile<8xf32>
  tile.return
}

// -----
tile.func @f(%n: i32) {
  %c = arith.constant {value = 1} : i32
  // expected-error@+1 {{'scf.for' op body arguments must be (iv, iter_args...) matching the init types}}
  scf.for %c, %n, %c : i32, i32, i32 {
  ^bb0(%i: i64):
    scf.yield
  }
  tile.return
}

// -----
tile.func @f(%c: i1) {
  // expected-error@+1 {{'scf.if' op expects 2 regions, got 1}}
  scf.if %c : i1 {
    scf.yield
  }
  tile.return
}

// -----
// expected-error@+1 {{'tile.func' has no results}}
%0 = tile.func @f() {
  tile.return
}

// -----
// expected-error@+1 {{'result_types' is given twice (after '->' and as an attribute)}}
tile.func @f() -> (f32) attributes {result_types = (f32)} {
  %0 = arith.constant {value = 1.0} : f32
  tile.return %0 : f32
}

// -----
// expected-error@+1 {{'tile.func' op 'arg_names' has 1 entries for 2 arguments}}
tile.func @f(%0: i32, %1: i32) attributes {arg_names = ("a")} {
  tile.return
}

// -----
tile.func @f(%x: f32) {
  // expected-error@+1 {{expected a result name, got 'arith.neg'}}
  %0, arith.neg %x : f32
  tile.return
}

// -----
tile.func @f(%x: f32) {
  // expected-error@+1 {{expected a line number, got 'x'}}
  %0 = arith.neg %x : f32 loc("a.py":x:1)
  tile.return
}

// -----
// Verifier errors are reported at the op's own loc(...) when it has one.
tile.func @f(%c: i1) {
  // expected-error@"kernel.py":3:9 {{'tile.assert' op requires attribute 'message'}}
  tile.assert %c : i1 loc("kernel.py":3:9)
  tile.return
}

// -----
wi.func @f() attributes {num_threads = 1} {
  %a = wi.alloc : memref<4xf32, private>
  %c = wi.alloc : memref<8xf32, private>
  %i = wi.alloc : memref<16xf32, private>
  // expected-error@+1 {{'wi.mma' op init must have c's type}}
  wi.mma %a, %c, %c, %i {block_m = 2, block_n = 4, k = 2, m = 2, n = 4, vector_width = 4} : memref<4xf32, private>, memref<8xf32, private>, memref<8xf32, private>, memref<16xf32, private>
  wi.return
}

// -----
wi.func @f(%n: i32) attributes {num_threads = 1} {
  // expected-error@+1 {{'wi.prefetch' op prefetches through a scalar pointer}}
  wi.prefetch %n : i32
  wi.return
}

// -----
wi.func @f(%p: ptr<f32>) attributes {num_threads = 1} {
  // expected-error@+1 {{'wi.align_gap' op bytes must be a power of two, got 48}}
  %0 = wi.align_gap %p {bytes = 48} : (ptr<f32>) -> i32
  wi.return
}

// -----
tile.func @f(%x: f32) {
  %0 = arith.neg %x : f32
// expected-error@+1 {{missing '}' to close the region opened at invalid.mlir:446:23}}

// -----
tile.func @f(%x: tile<4x8xf32>, %i: tile<2x4xi32>) {
  // expected-error@+1 {{'tile.gather' op index shape (2, 4) must equal src shape (4, 8) except on axis 1}}
  %0 = tile.gather %x, %i {axis = 1} : (tile<4x8xf32>, tile<2x4xi32>) -> tile<2x4xf32>
  tile.return
}

// -----
tile.func @f(%x: tile<8xf32>, %i: tile<4xf32>) {
  // expected-error@+1 {{'tile.gather' op expects an integer type, got tile<4xf32>}}
  %0 = tile.gather %x, %i {axis = 0} : (tile<8xf32>, tile<4xf32>) -> tile<4xf32>
  tile.return
}

// -----
tile.func @f(%p: ptr<ptr<f32>>, %v: ptr<f32>) {
  // expected-error@+1 {{'tile.atomic_rmw' op atomics need scalar pointees, not pointers}}
  %0 = tile.atomic_rmw %p, %v {kind = "xchg"} : (ptr<ptr<f32>>, ptr<f32>) -> ptr<f32>
  tile.return
}

// -----
wi.func @f(%p: ptr<f32>, %c: i64) attributes {num_threads = 1} {
  // expected-error@+1 {{'wi.gvload' op expects an i1 guard or an i32 lane count, got i64}}
  %0 = wi.gvload %p, %c : (ptr<f32>, i64) -> vector<16xf32>
  wi.return
}

// -----
wi.func @f(%p: ptr<f32>, %c: i16) attributes {num_threads = 1} {
  %v = wi.gvload %p : (ptr<f32>) -> vector<16xf32>
  // expected-error@+1 {{'wi.gvstore' op expects an i1 guard or an i32 lane count, got i16}}
  wi.gvstore %p, %v, %c : ptr<f32>, vector<16xf32>, i16
  wi.return
}

// -----
wi.func @f(%i: i32, %b: i1) attributes {num_threads = 1} {
  %m = wi.alloc : memref<32xf32, private>
  %v = wi.vload %m, %i : (memref<32xf32, private>, i32) -> vector<16xf32>
  // expected-error@+1 {{'wi.vstore' op expects an i32 lane count, got i1}}
  wi.vstore %v, %m, %i, %b : vector<16xf32>, memref<32xf32, private>, i32, i1
  wi.return
}

// -----
wi.func @f(%i: i32, %c: u32) attributes {num_threads = 1} {
  %m = wi.alloc : memref<32xf32, private>
  // expected-error@+1 {{'wi.vload' op expects an i32 lane count, got u32}}
  %v = wi.vload %m, %i, %c {stride = 2} : (memref<32xf32, private>, i32, u32) -> vector<16xf32>
  wi.return
}
