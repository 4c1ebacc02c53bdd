// float -> i8/i16 conversions go through i32 and keep the low bits, as PyTorch converts on
// CPU (300.0 -> 44 in int8); conversions to i32 and wider are left alone.
// RUN: helion-opt %s --helion-narrow-ints-through-i32 | FileCheck %s

// CHECK-LABEL: func.func @f32_to_i8(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: f32
// CHECK-NEXT: %[[WIDE:[a-z0-9_]+]] = arith.fptosi %[[X]] : f32 to i32
// CHECK-NEXT: %[[LOW:[a-z0-9_]+]] = arith.trunci %[[WIDE]] : i32 to i8
// CHECK-NEXT: return %[[LOW]] : i8
func.func @f32_to_i8(%x: f32) -> i8 {
  %0 = arith.fptosi %x : f32 to i8
  return %0 : i8
}

// uint8 too: -1.0 is 255, not poison.
// CHECK-LABEL: func.func @bf16_to_u8(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: bf16
// CHECK-NEXT: %[[WIDE:[a-z0-9_]+]] = arith.fptosi %[[X]] : bf16 to i32
// CHECK-NEXT: arith.trunci %[[WIDE]] : i32 to i8
func.func @bf16_to_u8(%x: bf16) -> i8 {
  %0 = arith.fptoui %x : bf16 to i8
  return %0 : i8
}

// CHECK-LABEL: func.func @f16_to_i16(
// CHECK: arith.trunci %{{[a-z0-9_]+}} : i32 to i16
func.func @f16_to_i16(%x: f16) -> i16 {
  %0 = arith.fptosi %x : f16 to i16
  return %0 : i16
}

// CHECK-LABEL: func.func @left_alone(
// CHECK-NEXT: arith.fptosi %{{[a-z0-9_]+}} : f32 to i32
// CHECK-NEXT: arith.fptosi %{{[a-z0-9_]+}} : f64 to i64
// CHECK-NOT: trunci
func.func @left_alone(%x: f32, %y: f64) -> (i32, i64) {
  %0 = arith.fptosi %x : f32 to i32
  %1 = arith.fptosi %y : f64 to i64
  return %0, %1 : i32, i64
}
