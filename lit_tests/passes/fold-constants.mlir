// sccp folds the grids' trip counts once block sizes are constants, without
// canonicalization's patterns.
// RUN: helion-opt %s --helion-fold-constants | FileCheck %s

// CHECK-LABEL: func.func @trips(
// CHECK: %[[TRIPS:[a-z0-9_]+]] = arith.constant 3 : index
// CHECK-NOT: arith.ceildivsi
// CHECK: return %[[TRIPS]] : index
func.func @trips() -> index {
  %block = arith.constant 16 : index
  %n = arith.constant 37 : index
  %t = arith.ceildivsi %n, %block : index
  return %t : index
}
