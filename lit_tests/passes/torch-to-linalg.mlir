// torch-mlir's conversions: an ATen op between torch_c casts becomes linalg on tensors.
// RUN: helion-opt %s --helion-torch-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @tanh(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<4xf32>
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[T:[a-z0-9_]+]] = linalg.generic {{.*}} ins(%[[A]] : tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
// CHECK: math.tanh
// CHECK: return %[[T]] : tensor<4xf32>
func.func @tanh(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = torch_c.from_builtin_tensor %a : tensor<4xf32> -> !torch.vtensor<[4],f32>
  %1 = torch.aten.tanh %0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %2 = torch_c.to_builtin_tensor %1 : !torch.vtensor<[4],f32> -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
