// torch-mlir lowers a few ATen ops (cumsum, sort, scatter) to tm_tensor ops, which
// one-shot-bufferize cannot handle: each is reported at its line, its nested
// tm_tensor.yield is not. A module with none passes unchanged.
// tm_tensor is loaded only by the conversion that makes it, so the op is parsed generic.
// RUN: helion-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect \
// RUN:   --helion-reject-tm-tensor-ops | FileCheck %s

// CHECK-LABEL: func.func @no_tm_tensor(
// CHECK-NEXT: %[[SUM:[a-z0-9_]+]] = arith.addf
// CHECK-NEXT: return %[[SUM]] : f32
func.func @no_tm_tensor(%x: f32) -> f32 {
  %0 = arith.addf %x, %x : f32
  return %0 : f32
}

// -----

func.func @cumsum(%x: tensor<8xf32>, %out: tensor<8xf32>, %carry: tensor<f32>) -> tensor<8xf32> {
  // expected-error @below {{torch-mlir lowers this ATen op to tm_tensor.scan, which the CPU pipeline cannot bufferize; it has no lowering here}}
  %0:2 = "tm_tensor.scan"(%x, %out, %carry) ({
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    "tm_tensor.yield"(%s) : (f32) -> ()
  }) : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> (tensor<8xf32>, tensor<f32>)
  return %0#0 : tensor<8xf32>
}
