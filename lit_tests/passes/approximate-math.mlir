// math.exp/exp2/log/tanh/erf on f32, f16 or bf16 (scalar or vector) become polynomials in
// arith and math.fma, computed in f32; f64, tensors and other math ops are left alone.
// RUN: helion-opt %s --helion-approximate-math | FileCheck %s

// exp: the argument clamped, reduced by round(x / ln 2), then a polynomial.
// CHECK-LABEL: func.func @half_exp(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: vector<8xf16>
// CHECK-NEXT: %[[WIDE:[a-z0-9_]+]] = arith.extf %[[X]] : vector<8xf16> to vector<8xf32>
// CHECK-NEXT: %[[LOW:[a-z0-9_]+]] = arith.constant dense<-1.040000e+02> : vector<8xf32>
// CHECK-NEXT: %[[ABOVE:[a-z0-9_]+]] = arith.maximumf %[[WIDE]], %[[LOW]] : vector<8xf32>
// CHECK-NEXT: %[[HIGH:[a-z0-9_]+]] = arith.constant dense<8.900000e+01> : vector<8xf32>
// CHECK-NEXT: %[[CLAMPED:[a-z0-9_]+]] = arith.minimumf %[[ABOVE]], %[[HIGH]] : vector<8xf32>
// CHECK: %[[N:[a-z0-9_]+]] = math.roundeven %{{[a-z0-9_]+}} : vector<8xf32>
// CHECK: math.fma
// CHECK-NOT: math.exp
// CHECK: %[[NARROW:[a-z0-9_]+]] = arith.truncf %{{[a-z0-9_]+}} : vector<8xf32> to vector<8xf16>
// CHECK-NEXT: return %[[NARROW]] : vector<8xf16>
func.func @half_exp(%x: vector<8xf16>) -> vector<8xf16> {
  %0 = math.exp %x : vector<8xf16>
  return %0 : vector<8xf16>
}

// CHECK-LABEL: func.func @f32_tanh(
// CHECK-NOT: math.tanh
// CHECK: return
func.func @f32_tanh(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  return %0 : f32
}

// CHECK-LABEL: func.func @left_alone(
// CHECK-NEXT: math.exp %{{[a-z0-9_]+}} : f64
// CHECK-NEXT: math.exp %{{[a-z0-9_]+}} : tensor<4xf32>
// CHECK-NEXT: math.sqrt %{{[a-z0-9_]+}} : f32
func.func @left_alone(%d: f64, %t: tensor<4xf32>, %x: f32) -> (f64, tensor<4xf32>, f32) {
  %0 = math.exp %d : f64
  %1 = math.exp %t : tensor<4xf32>
  %2 = math.sqrt %x : f32
  return %0, %1, %2 : f64, tensor<4xf32>, f32
}
