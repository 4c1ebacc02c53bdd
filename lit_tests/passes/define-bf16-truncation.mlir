// A module in the LLVM dialect with bf16 values gets a definition of __truncsfbf2 (in
// place of its declaration); a module without bf16 values gets none.
// RUN: helion-opt %s --split-input-file --helion-define-bf16-truncation | FileCheck %s

// CHECK-LABEL: llvm.func @narrow(
// CHECK-NEXT: %[[B:[a-z0-9_]+]] = llvm.call @__truncsfbf2(%{{[a-z0-9_]+}}) : (f32) -> bf16
// CHECK-NOT: llvm.func @__truncsfbf2(f32) -> bf16
// CHECK: llvm.func weak @__truncsfbf2(%[[X:[a-z0-9_]+]]: f32) -> bf16 {
// CHECK: %[[BITS:[a-z0-9_]+]] = llvm.bitcast %[[X]] : f32 to i32
// CHECK: %[[NAN:[a-z0-9_]+]] = llvm.fcmp "uno" %[[X]], %[[X]] : f32
// CHECK: %[[RESULT:[a-z0-9_]+]] = llvm.bitcast %{{[a-z0-9_]+}} : i16 to bf16
// CHECK-NEXT: llvm.return %[[RESULT]] : bf16
llvm.func @narrow(%x: f32) -> bf16 {
  %b = llvm.call @__truncsfbf2(%x) : (f32) -> bf16
  llvm.return %b : bf16
}
llvm.func @__truncsfbf2(f32) -> bf16

// -----

// CHECK-LABEL: llvm.func @no_bf16(
// CHECK-NOT: __truncsfbf2
llvm.func @no_bf16(%x: f32) -> f32 {
  llvm.return %x : f32
}
