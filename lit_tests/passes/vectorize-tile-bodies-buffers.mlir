// Linalg ops on buffers (input already bufferized) have no result to size a schedule by:
// the pass leaves them as they are, and the whole pipeline lowers them as scalar loops.
// RUN: helion-opt %s --helion-vectorize-tile-bodies | FileCheck %s
// RUN: helion-opt %s --helion-lower-to-llvm | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @fill_and_matmul(
// CHECK: linalg.fill ins(%{{[a-z0-9_]+}} : f32) outs(%{{[a-z0-9_]+}} : memref<32xf32>)
// CHECK: linalg.matmul ins(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : memref<8x8xf32>, memref<8x8xf32>) outs(%{{[a-z0-9_]+}} : memref<8x8xf32>)
// LLVM: llvm.func @fill_and_matmul(
// LLVM: llvm.fmul
// LLVM-NEXT: llvm.fadd
func.func @fill_and_matmul(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>, %o: memref<32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%o : memref<32xf32>)
  linalg.matmul ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  return
}
