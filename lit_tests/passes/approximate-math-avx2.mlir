// On a target without AVX-512 (16 vector registers: AVX2) there is no vscalefps: exp of a
// vector of whole zmm widths takes the same branch as a narrower one, the exponent bits
// where every scale is normal, else the clamped two-factor scale.
// RUN: helion-opt %s --helion-approximate-math | FileCheck %s

// CHECK-LABEL: func.func @f32_exp(
// CHECK-NOT: x86.
// CHECK: %[[ANY:[a-z0-9_]+]] = vector.reduction <or>, %{{[a-z0-9_]+}} : vector<32xi1> into i1
// CHECK-NEXT: scf.if %[[ANY]] -> (vector<2x16xf32>) {
// CHECK: arith.shli
// CHECK: } else {
// CHECK: arith.addi
// CHECK-NOT: x86.
// CHECK: return
module attributes {helion.vector_registers = 16 : i64} {
  func.func @f32_exp(%x: vector<2x16xf32>) -> vector<2x16xf32> {
    %0 = math.exp %x : vector<2x16xf32>
    return %0 : vector<2x16xf32>
  }
}
