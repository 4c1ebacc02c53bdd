// arith.extf from f8E4M3FN becomes integer bit manipulation (LLVM has no fp8 type): the
// exponent rebiased for normal numbers, mant * 2^-9 for subnormals, S.1111.111 as NaN,
// then an ordinary conversion from f32 to the result type.
// RUN: helion-opt %s --helion-expand-fp8-extensions | FileCheck %s

// CHECK-LABEL: func.func @fp8_to_f16(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: f8E4M3FN
// CHECK-NEXT: %[[BYTE:[a-z0-9_]+]] = arith.bitcast %[[X]] : f8E4M3FN to i8
// CHECK-NEXT: %[[BITS:[a-z0-9_]+]] = arith.extui %[[BYTE]] : i8 to i32
// CHECK: %[[C120:[a-z0-9_]+]] = arith.constant 120 : i32
// CHECK-NEXT: arith.addi %{{[a-z0-9_]+}}, %[[C120]] : i32
// CHECK: %[[SCALE:[a-z0-9_]+]] = arith.constant 0.001953125 : f32
// CHECK-NEXT: arith.mulf %{{[a-z0-9_]+}}, %[[SCALE]] : f32
// CHECK: %[[NAN:[a-z0-9_]+]] = arith.constant 0x7FC00000 : f32
// CHECK-NEXT: %[[F32:[a-z0-9_]+]] = arith.select %{{[a-z0-9_]+}}, %[[NAN]], %{{[a-z0-9_]+}} : f32
// CHECK-NEXT: %[[HALF:[a-z0-9_]+]] = arith.truncf %[[F32]] : f32 to f16
// CHECK-NEXT: return %[[HALF]] : f16
func.func @fp8_to_f16(%x: f8E4M3FN) -> f16 {
  %0 = arith.extf %x : f8E4M3FN to f16
  return %0 : f16
}

// Truncations to fp8 are another pass's.
// CHECK-LABEL: func.func @truncation(
// CHECK-NEXT: arith.truncf %{{[a-z0-9_]+}} : f32 to f8E4M3FN
func.func @truncation(%x: f32) -> f8E4M3FN {
  %0 = arith.truncf %x : f32 to f8E4M3FN
  return %0 : f8E4M3FN
}
