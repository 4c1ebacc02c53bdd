// Integer division and remainder by a divisor that is not a constant divide by 1 where the
// divisor is 0 (x86 traps on it, and padded tile lanes hold 0); constant divisors are left
// alone. Vector divisors are guarded lane by lane.
// RUN: helion-opt %s --helion-guard-integer-division | FileCheck %s

// CHECK-LABEL: func.func @scalars(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: i32, %[[B:[a-z0-9_]+]]: i32
// CHECK-NEXT: %[[C3:[a-z0-9_]+]] = arith.constant 3 : i32
// CHECK-NEXT: %[[ZERO:[a-z0-9_]+]] = arith.constant 0 : i32
// CHECK-NEXT: %[[ONE:[a-z0-9_]+]] = arith.constant 1 : i32
// CHECK-NEXT: %[[IS_ZERO:[a-z0-9_]+]] = arith.cmpi eq, %[[B]], %[[ZERO]] : i32
// CHECK-NEXT: %[[SAFE:[a-z0-9_]+]] = arith.select %[[IS_ZERO]], %[[ONE]], %[[B]] : i32
// CHECK-NEXT: %[[Q:[a-z0-9_]+]] = arith.divsi %[[A]], %[[SAFE]] : i32
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = arith.remui %[[A]], %[[C3]] : i32
// CHECK-NEXT: return %[[Q]], %[[R]] : i32, i32
func.func @scalars(%a: i32, %b: i32) -> (i32, i32) {
  %c3 = arith.constant 3 : i32
  %0 = arith.divsi %a, %b : i32
  %1 = arith.remui %a, %c3 : i32
  return %0, %1 : i32, i32
}

// CHECK-LABEL: func.func @vectors(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: vector<4xi64>, %[[B:[a-z0-9_]+]]: vector<4xi64>
// CHECK-NEXT: %[[ZERO:[a-z0-9_]+]] = arith.constant dense<0> : vector<4xi64>
// CHECK-NEXT: %[[ONE:[a-z0-9_]+]] = arith.constant dense<1> : vector<4xi64>
// CHECK-NEXT: %[[IS_ZERO:[a-z0-9_]+]] = arith.cmpi eq, %[[B]], %[[ZERO]] : vector<4xi64>
// CHECK-NEXT: %[[SAFE:[a-z0-9_]+]] = arith.select %[[IS_ZERO]], %[[ONE]], %[[B]] : vector<4xi1>, vector<4xi64>
// CHECK-NEXT: arith.floordivsi %[[A]], %[[SAFE]] : vector<4xi64>
func.func @vectors(%a: vector<4xi64>, %b: vector<4xi64>) -> vector<4xi64> {
  %0 = arith.floordivsi %a, %b : vector<4xi64>
  return %0 : vector<4xi64>
}
