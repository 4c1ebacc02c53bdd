// x86.avx512.mask.scalef (dst = k ? a * 2^floor(b) : src) becomes a call of its intrinsic
// with the operands in the intrinsic's order, (a, b, src, k, rounding): upstream's lowering
// passes them in the op's order, (src, a, b, ...), a different product. Other ops stay.
// RUN: helion-opt %s --helion-x86-intrinsics | FileCheck %s

// CHECK-LABEL: func.func @scale(
// CHECK-SAME: %[[SRC:[a-z0-9_]+]]: vector<16xf32>, %[[A:[a-z0-9_]+]]: vector<16xf32>, %[[B:[a-z0-9_]+]]: vector<16xf32>, %[[K:[a-z0-9_]+]]: i16
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = arith.constant 4 : i32
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = llvm.call_intrinsic "llvm.x86.avx512.mask.scalef.ps.512"(%[[A]], %[[B]], %[[SRC]], %[[K]], %[[R]]) : (vector<16xf32>, vector<16xf32>, vector<16xf32>, i16, i32) -> vector<16xf32>
// CHECK-NEXT: %[[M:[a-z0-9_]+]] = arith.maximumf %[[Y]], %[[A]] : vector<16xf32>
// CHECK-NEXT: return %[[M]] : vector<16xf32>
func.func @scale(%src: vector<16xf32>, %a: vector<16xf32>, %b: vector<16xf32>, %k: i16) -> vector<16xf32> {
  %r = arith.constant 4 : i32
  %0 = x86.avx512.mask.scalef %src, %a, %b, %k, %r : vector<16xf32>
  %1 = arith.maximumf %0, %a : vector<16xf32>
  return %1 : vector<16xf32>
}
