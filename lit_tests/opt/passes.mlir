// Single passes as flags (implicitly nested, in command-line order), --pass-pipeline,
// --split-input-file output and --mlir-print-ir-after-all, as with mlir-opt.
// RUN: helion-opt %s --split-input-file --cse --canonicalize --convert-torch-to-linalg | FileCheck %s
// RUN: helion-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(cse))' | FileCheck %s --check-prefix=PIPELINE
// RUN: helion-opt %s --split-input-file -cse --mlir-print-ir-after-all -convert-torch-to-linalg 2>&1 >/dev/null | FileCheck %s --check-prefix=IR-AFTER

// cse merges the two adds, canonicalize folds the add of zero.
// CHECK-LABEL: func.func @duplicates(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: index
// CHECK-NEXT: %[[SUM:[a-z0-9_]+]] = arith.addi %[[A]], %[[A]] : index
// CHECK-NEXT: %[[PRODUCT:[a-z0-9_]+]] = arith.muli %[[SUM]], %[[SUM]] : index
// CHECK-NEXT: return %[[PRODUCT]] : index
// Only cse ran: the add of zero is still there.
// PIPELINE-LABEL: func.func @duplicates(
// PIPELINE: %[[SUM:[a-z0-9_]+]] = arith.addi %[[A:[a-z0-9_]+]], %[[A]] : index
// PIPELINE-NEXT: %[[Z:[a-z0-9_]+]] = arith.addi %[[SUM]], %{{[a-z0-9_]+}} : index
// PIPELINE-NEXT: arith.muli %[[Z]], %[[SUM]] : index
func.func @duplicates(%a: index) -> index {
  %c0 = arith.constant 0 : index
  %s0 = arith.addi %a, %a : index
  %s1 = arith.addi %a, %a : index
  %z = arith.addi %s0, %c0 : index
  %p = arith.muli %z, %s1 : index
  return %p : index
}

// -----

// convert-torch-to-linalg is a func.func pass: the flag nests it as mlir-opt does.
// CHECK: // -----
// CHECK-LABEL: func.func @tanh(
// CHECK: torch_c.to_builtin_tensor
// CHECK: linalg.generic
// CHECK: math.tanh
// PIPELINE: // -----
// PIPELINE: torch.aten.tanh
// IR-AFTER: IR Dump After CSEPass: cse
// IR-AFTER: IR Dump After ConvertTorchToLinalg: convert-torch-to-linalg
// IR-AFTER: IR Dump After CSEPass: cse
// IR-AFTER-NEXT: module {
// IR-AFTER-NEXT: func.func @tanh
// IR-AFTER: IR Dump After ConvertTorchToLinalg: convert-torch-to-linalg
// IR-AFTER: math.tanh
func.func @tanh(%a: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.aten.tanh %a : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
