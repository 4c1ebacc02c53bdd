// A matmul's B block of strided rows (64 of y's 1024 columns) is copied into a contiguous
// buffer first; a block of whole rows, a block over 32 KB, and A are left as they are.
// RUN: helion-opt %s --helion-pack-contraction-operands | FileCheck %s

// CHECK-LABEL: func.func @strided_b(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<64x1024xf32>, %[[Y:[a-z0-9_]+]]: tensor<1024x1024xf32>
// CHECK: %[[A:.*]] = tensor.extract_slice %[[X]]
// CHECK: %[[B:.*]] = tensor.extract_slice %[[Y]]
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<64x64xf32>
// CHECK: %[[PACKED:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<64x64xf32>) outs(%[[EMPTY]] : tensor<64x64xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: linalg.matmul ins(%[[A]], %[[PACKED]] : tensor<64x64xf32>, tensor<64x64xf32>)
func.func @strided_b(%x: tensor<64x1024xf32>, %y: tensor<1024x1024xf32>, %acc: tensor<64x64xf32>, %k: index, %n: index) -> tensor<64x64xf32> {
  %a = tensor.extract_slice %x[0, %k] [64, 64] [1, 1] : tensor<64x1024xf32> to tensor<64x64xf32>
  %b = tensor.extract_slice %y[%k, %n] [64, 64] [1, 1] : tensor<1024x1024xf32> to tensor<64x64xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @whole_rows(
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul
func.func @whole_rows(%x: tensor<64x1024xf32>, %y: tensor<1024x64xf32>, %acc: tensor<64x64xf32>, %k: index) -> tensor<64x64xf32> {
  %a = tensor.extract_slice %x[0, %k] [64, 64] [1, 1] : tensor<64x1024xf32> to tensor<64x64xf32>
  %b = tensor.extract_slice %y[%k, 0] [64, 64] [1, 1] : tensor<1024x64xf32> to tensor<64x64xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @too_large(
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul
func.func @too_large(%x: tensor<64x1024xf32>, %y: tensor<1024x1024xf32>, %acc: tensor<64x64xf32>, %n: index) -> tensor<64x64xf32> {
  %b = tensor.extract_slice %y[0, %n] [1024, 64] [1, 1] : tensor<1024x1024xf32> to tensor<1024x64xf32>
  %0 = linalg.matmul ins(%x, %b : tensor<64x1024xf32>, tensor<1024x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
