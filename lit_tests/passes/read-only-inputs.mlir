// Tensor arguments that helion.output_args does not name get bufferization.writable =
// false (the output and scalars stay as they are); a func it does not name is left alone.
// RUN: helion-opt %s --helion-read-only-inputs | FileCheck %s

// CHECK-LABEL: func.func @kernel(
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<8xf32> {bufferization.writable = false}, %{{[a-z0-9]+}}: tensor<8xf32> {bufferization.writable = false}, %{{[a-z0-9]+}}: tensor<8xf32>, %{{[a-z0-9]+}}: i64)
// CHECK-LABEL: func.func @untraced(
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<8xf32>) -> tensor<8xf32> {
module attributes {helion.output_args = {kernel = array<i64: 2>}} {
func.func @kernel(%x: tensor<8xf32>, %bias: tensor<8xf32>, %out: tensor<8xf32>, %n: i64) -> tensor<8xf32> {
  %r = scf.forall (%i) in (2) shared_outs(%o = %out) -> (tensor<8xf32>) {
    %v = tensor.extract_slice %x[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %o[0] [4] [1] : tensor<4xf32> into tensor<8xf32>
    }
  }
  return %r : tensor<8xf32>
}
func.func @untraced(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = arith.addf %x, %x : tensor<8xf32>
  return %y : tensor<8xf32>
}
}
