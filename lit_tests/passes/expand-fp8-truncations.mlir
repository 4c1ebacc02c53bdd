// arith.truncf to f8E4M3FN becomes integer bit manipulation on the f32 value (LLVM has no
// fp8 type): rounded to nearest even, saturated at 0x7E (448), NaN as 0x7F, the sign kept.
// RUN: helion-opt %s --helion-expand-fp8-truncations | FileCheck %s

// CHECK-LABEL: func.func @bf16_to_fp8(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: bf16
// CHECK-NEXT: %[[F32:[a-z0-9_]+]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[BITS:[a-z0-9_]+]] = arith.bitcast %[[F32]] : f32 to i32
// CHECK: %[[MAX:[a-z0-9_]+]] = arith.constant 126 : i32
// CHECK-NEXT: %[[FINITE:[a-z0-9_]+]] = arith.minui %{{[a-z0-9_]+}}, %[[MAX]] : i32
// CHECK: %[[NAN:[a-z0-9_]+]] = arith.constant 127 : i32
// CHECK-NEXT: %[[VALUE:[a-z0-9_]+]] = arith.select %{{[a-z0-9_]+}}, %[[NAN]], %[[FINITE]] : i32
// CHECK: %[[SIGNED:[a-z0-9_]+]] = arith.ori %[[VALUE]], %{{[a-z0-9_]+}} : i32
// CHECK-NEXT: %[[BYTE:[a-z0-9_]+]] = arith.trunci %[[SIGNED]] : i32 to i8
// CHECK-NEXT: %[[FP8:[a-z0-9_]+]] = arith.bitcast %[[BYTE]] : i8 to f8E4M3FN
// CHECK-NEXT: return %[[FP8]] : f8E4M3FN
func.func @bf16_to_fp8(%x: bf16) -> f8E4M3FN {
  %0 = arith.truncf %x : bf16 to f8E4M3FN
  return %0 : f8E4M3FN
}

// Extensions from fp8 are another pass's.
// CHECK-LABEL: func.func @extension(
// CHECK-NEXT: arith.extf %{{[a-z0-9_]+}} : f8E4M3FN to f32
func.func @extension(%x: f8E4M3FN) -> f32 {
  %0 = arith.extf %x : f8E4M3FN to f32
  return %0 : f32
}
