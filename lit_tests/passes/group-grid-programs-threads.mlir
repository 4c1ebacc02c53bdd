// Groups are sized for the threads the module says it runs on (`helion.threads`, which the
// JIT sets to torch's thread count; 8 without it): the 64 column strips below run in one
// group per thread on 2 threads, and on 3 threads in 8 groups of 8, where 2 or 4 groups
// would leave one thread twice the strips of another. A thread count below one counts as
// one: the whole grid is one group. An attribute that is not an integer is an error at the
// module's place.
// RUN: helion-opt %s --helion-group-grid-programs | FileCheck %s --check-prefix=TWO
// RUN: sed -e 's/helion.threads = 2/helion.threads = 3/' %s | helion-opt --helion-group-grid-programs | FileCheck %s --check-prefix=THREE
// RUN: sed -e 's/helion.threads = 2/helion.threads = 0/' %s | helion-opt --helion-group-grid-programs | FileCheck %s --check-prefix=ONE
// RUN: sed -e 's/helion.threads = 2 : i64/helion.threads = "two"/' %s | not helion-opt --helion-group-grid-programs 2>&1 | FileCheck %s --check-prefix=BAD

// TWO: scf.forall (%{{[a-z0-9_]+}}) in (2) {
// TWO: arith.constant 32 : index
// THREE: scf.forall (%{{[a-z0-9_]+}}) in (8) {
// THREE: arith.constant 8 : index
// ONE: scf.forall (%{{[a-z0-9_]+}}) in (1) {
// ONE: arith.constant 64 : index
// BAD: <stdin>:19:1: error: module attribute helion.threads must be an integer, not "two"
module attributes {helion.threads = 2 : i64} {
  func.func @col_sum(%x: memref<16x2048xf32>, %out: memref<2048xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %zero = arith.constant 0.0 : f32
    scf.forall (%i) in (64) {
      %col = arith.muli %i, %c32 : index
      %acc = memref.subview %out[%col] [32] [1] : memref<2048xf32> to memref<32xf32, strided<[1], offset: ?>>
      linalg.fill ins(%zero : f32) outs(%acc : memref<32xf32, strided<[1], offset: ?>>)
      scf.for %r = %c0 to %c16 step %c1 {
        %row = memref.subview %x[%r, %col] [1, 32] [1, 1] : memref<16x2048xf32> to memref<32xf32, strided<[1], offset: ?>>
        linalg.add ins(%row, %acc : memref<32xf32, strided<[1], offset: ?>>, memref<32xf32, strided<[1], offset: ?>>) outs(%acc : memref<32xf32, strided<[1], offset: ?>>)
      }
    }
    return
  }
}
