// f64 <-> f16/bf16 scalar conversions go through f32 (the JIT has no __truncdfhf2-style
// runtime functions); other conversions, and shaped ones, are left alone.
// RUN: helion-opt %s --helion-split-half-conversions | FileCheck %s

// CHECK-LABEL: func.func @f64_to_bf16(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: f64
// CHECK-NEXT: %[[F32:[a-z0-9_]+]] = arith.truncf %[[X]] : f64 to f32
// CHECK-NEXT: %[[HALF:[a-z0-9_]+]] = arith.truncf %[[F32]] : f32 to bf16
// CHECK-NEXT: return %[[HALF]] : bf16
func.func @f64_to_bf16(%x: f64) -> bf16 {
  %0 = arith.truncf %x : f64 to bf16
  return %0 : bf16
}

// CHECK-LABEL: func.func @f16_to_f64(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: f16
// CHECK-NEXT: %[[F32:[a-z0-9_]+]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT: %[[WIDE:[a-z0-9_]+]] = arith.extf %[[F32]] : f32 to f64
// CHECK-NEXT: return %[[WIDE]] : f64
func.func @f16_to_f64(%x: f16) -> f64 {
  %0 = arith.extf %x : f16 to f64
  return %0 : f64
}

// CHECK-LABEL: func.func @left_alone(
// CHECK-NEXT: arith.truncf %{{[a-z0-9_]+}} : f32 to f16
// CHECK-NEXT: arith.extf %{{[a-z0-9_]+}} : tensor<4xf16> to tensor<4xf64>
func.func @left_alone(%x: f32, %t: tensor<4xf16>) -> (f16, tensor<4xf64>) {
  %0 = arith.truncf %x : f32 to f16
  %1 = arith.extf %t : tensor<4xf16> to tensor<4xf64>
  return %0, %1 : f16, tensor<4xf64>
}
