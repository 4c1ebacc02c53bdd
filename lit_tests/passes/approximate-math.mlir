// math.exp/exp2/expm1/log/log1p/tanh/erf on f32, f16 or bf16 (scalar or vector) become
// polynomials in arith and math.fma, computed in f32 (rsqrt: 1 / sqrt in f32); f64, tensors
// and other math ops are left alone.
// RUN: helion-opt %s --helion-approximate-math | FileCheck %s

// exp: reduced by round(x / ln 2), then a polynomial. A vector of part of a zmm register (8
// lanes) has no vscalefps: where its every 2^n scale is a normal f32 it adds n to the
// exponent bits, unclamped; any other vector takes the branch that clamps the argument
// (compares and selects: NaN stays NaN) and scales by two normal factors.
// CHECK-LABEL: func.func @half_exp(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: vector<8xf16>
// CHECK-NEXT: %[[WIDE:[a-z0-9_]+]] = arith.extf %[[X]] : vector<8xf16> to vector<8xf32>
// CHECK: %[[N:[a-z0-9_]+]] = math.roundeven %{{[a-z0-9_]+}} : vector<8xf32>
// CHECK: %[[LOWEST:[a-z0-9_]+]] = arith.constant dense<-1.250000e+02> : vector<8xf32>
// CHECK-NEXT: arith.cmpf oge, %[[N]], %[[LOWEST]] : vector<8xf32>
// CHECK: %[[ANY:[a-z0-9_]+]] = vector.reduction <or>, %{{[a-z0-9_]+}} : vector<8xi1> into i1
// CHECK-NEXT: %[[E:[a-z0-9_]+]] = scf.if %[[ANY]] -> (vector<8xf32>) {
// CHECK: %[[LOW:[a-z0-9_]+]] = arith.constant dense<-1.040000e+02> : vector<8xf32>
// CHECK-NEXT: %[[HIGH:[a-z0-9_]+]] = arith.constant dense<8.900000e+01> : vector<8xf32>
// CHECK-NEXT: %[[BELOW:[a-z0-9_]+]] = arith.cmpf olt, %[[WIDE]], %[[LOW]] : vector<8xf32>
// CHECK-NEXT: %[[ABOVE:[a-z0-9_]+]] = arith.select %[[BELOW]], %[[LOW]], %[[WIDE]]
// CHECK-NEXT: %[[OVER:[a-z0-9_]+]] = arith.cmpf ogt, %[[ABOVE]], %[[HIGH]] : vector<8xf32>
// CHECK-NEXT: arith.select %[[OVER]], %[[HIGH]], %[[ABOVE]]
// CHECK: } else {
// CHECK: math.fma %[[N]], %{{[a-z0-9_]+}}, %[[WIDE]] : vector<8xf32>
// CHECK: %[[BITS:[a-z0-9_]+]] = arith.bitcast %{{[a-z0-9_]+}} : vector<8xf32> to vector<8xi32>
// CHECK-NEXT: %[[SUM:[a-z0-9_]+]] = arith.addi %[[BITS]], %{{[a-z0-9_]+}} : vector<8xi32>
// CHECK-NEXT: %[[FAST:[a-z0-9_]+]] = arith.bitcast %[[SUM]] : vector<8xi32> to vector<8xf32>
// CHECK-NEXT: scf.yield %[[FAST]] : vector<8xf32>
// CHECK-NOT: math.exp
// CHECK: %[[NARROW:[a-z0-9_]+]] = arith.truncf %[[E]] : vector<8xf32> to vector<8xf16>
// CHECK-NEXT: return %[[NARROW]] : vector<8xf16>
func.func @half_exp(%x: vector<8xf16>) -> vector<8xf16> {
  %0 = math.exp %x : vector<8xf16>
  return %0 : vector<8xf16>
}

// Vectors of whole zmm registers on AVX-512 (the default target): the clamped argument, no
// branch, and the scale is one vscalefps per 16 lanes (`x86.avx512.mask.scalef`, every lane
// set: a * 2^b rounded once, subnormal results exact).
// CHECK-LABEL: func.func @f32_exp(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: vector<2x16xf32>
// CHECK-NOT: scf.if
// CHECK: %[[BELOW:[a-z0-9_]+]] = arith.cmpf olt, %[[X]], %{{[a-z0-9_]+}} : vector<2x16xf32>
// CHECK: %[[N:[a-z0-9_]+]] = math.roundeven %{{[a-z0-9_]+}} : vector<2x16xf32>
// e^r by Horner's rule, six fmas, the last two adding the polynomial's 1 + r:
// CHECK: %[[ONE:[a-z0-9_]+]] = arith.constant dense<1.000000e+00> : vector<2x16xf32>
// CHECK-NEXT: math.fma %{{[a-z0-9_]+}}, %[[R:[a-z0-9_]+]], %[[ONE]] : vector<2x16xf32>
// CHECK-NEXT: %[[ONE2:[a-z0-9_]+]] = arith.constant dense<1.000000e+00> : vector<2x16xf32>
// CHECK-NEXT: %[[P:[a-z0-9_]+]] = math.fma %{{[a-z0-9_]+}}, %[[R]], %[[ONE2]] : vector<2x16xf32>
// CHECK-NEXT: %[[ALL:[a-z0-9_-]+]] = arith.constant -1 : i16
// CHECK-NEXT: %[[ROUND:[a-z0-9_]+]] = arith.constant 4 : i32
// CHECK-NEXT: %[[PS:[a-z0-9_]+]] = vector.shape_cast %[[P]] : vector<2x16xf32> to vector<32xf32>
// CHECK-NEXT: %[[NS:[a-z0-9_]+]] = vector.shape_cast %[[N]] : vector<2x16xf32> to vector<32xf32>
// CHECK-NEXT: %[[P0:[a-z0-9_]+]] = vector.extract_strided_slice %[[PS]] {offsets = [0], sizes = [16], strides = [1]}
// CHECK-NEXT: %[[N0:[a-z0-9_]+]] = vector.extract_strided_slice %[[NS]] {offsets = [0], sizes = [16], strides = [1]}
// CHECK-NEXT: x86.avx512.mask.scalef %[[P0]], %[[P0]], %[[N0]], %[[ALL]], %[[ROUND]] : vector<16xf32>
// CHECK: x86.avx512.mask.scalef %{{.*}} : vector<16xf32>
// CHECK-NOT: x86.avx512.mask.scalef
// CHECK: %[[E:[a-z0-9_]+]] = vector.shape_cast %{{[a-z0-9_]+}} : vector<32xf32> to vector<2x16xf32>
// CHECK-NEXT: return %[[E]] : vector<2x16xf32>
func.func @f32_exp(%x: vector<2x16xf32>) -> vector<2x16xf32> {
  %0 = math.exp %x : vector<2x16xf32>
  return %0 : vector<2x16xf32>
}

// CHECK-LABEL: func.func @f32_tanh(
// CHECK-NOT: math.tanh
// CHECK: return
func.func @f32_tanh(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  return %0 : f32
}

// expm1: 2^n (e^r - 1) + (2^n - 1), one fma; no exp(x) - 1 of x near 0 (past 20, e^x).
// CHECK-LABEL: func.func @f32_expm1(
// CHECK-NOT: math.expm1
// CHECK: %[[N:[a-z0-9_]+]] = math.roundeven
// CHECK: %[[SCALE:[a-z0-9_]+]] = arith.bitcast %{{[a-z0-9_]+}} : i32 to f32
// CHECK: %[[ONE:[a-z0-9_]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[LESS:[a-z0-9_]+]] = arith.subf %[[SCALE]], %[[ONE]] : f32
// CHECK-NEXT: math.fma %[[SCALE]], %{{[a-z0-9_]+}}, %[[LESS]] : f32
// CHECK: arith.constant 2.000000e+01 : f32
// CHECK-NOT: math.expm1
// CHECK: return
func.func @f32_expm1(%x: f32) -> f32 {
  %0 = math.expm1 %x : f32
  return %0 : f32
}

// log1p: log(1 + x) plus the rounding of 1 + x, (x - ((1 + x) - 1)) / (1 + x).
// CHECK-LABEL: func.func @bf16_log1p(
// CHECK-NOT: math.log1p
// CHECK: %[[WIDE:[a-z0-9_]+]] = arith.extf %{{[a-z0-9_]+}} : vector<8xbf16> to vector<8xf32>
// CHECK: %[[U:[a-z0-9_]+]] = arith.addf %[[WIDE]], %{{[a-z0-9_]+}} : vector<8xf32>
// CHECK: %[[D:[a-z0-9_]+]] = arith.subf %[[U]], %{{[a-z0-9_]+}} : vector<8xf32>
// CHECK-NEXT: %[[LOST:[a-z0-9_]+]] = arith.subf %[[WIDE]], %[[D]] : vector<8xf32>
// CHECK: %[[SHARE:[a-z0-9_]+]] = arith.divf %[[LOST]], %[[U]] : vector<8xf32>
// CHECK-NOT: math.log
// CHECK: arith.truncf %{{[a-z0-9_]+}} : vector<8xf32> to vector<8xbf16>
func.func @bf16_log1p(%x: vector<8xbf16>) -> vector<8xbf16> {
  %0 = math.log1p %x : vector<8xbf16>
  return %0 : vector<8xbf16>
}

// rsqrt: 1 / sqrt in f32, so an f16 result rounds once.
// CHECK-LABEL: func.func @half_rsqrt(
// CHECK-NEXT: %[[WIDE:[a-z0-9_]+]] = arith.extf %{{[a-z0-9_]+}} : f16 to f32
// CHECK-NEXT: %[[ONE:[a-z0-9_]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[ROOT:[a-z0-9_]+]] = math.sqrt %[[WIDE]] : f32
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = arith.divf %[[ONE]], %[[ROOT]] : f32
// CHECK-NEXT: arith.truncf %[[Y]] : f32 to f16
func.func @half_rsqrt(%x: f16) -> f16 {
  %0 = math.rsqrt %x : f16
  return %0 : f16
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
