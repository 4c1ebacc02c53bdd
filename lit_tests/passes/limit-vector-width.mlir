// A module's helion.vector_width becomes LLVM's widest legal vector on each defined
// llvm.func (declarations have no code to split); earlier widths give way, other
// passthrough attributes stay.
// RUN: helion-opt %s --split-input-file --helion-limit-vector-width | FileCheck %s

// CHECK-LABEL: llvm.func @kernel(
// CHECK-SAME: passthrough = ["nounwind", ["prefer-vector-width", "256"], ["min-legal-vector-width", "256"]]
// CHECK-LABEL: llvm.func @region(
// CHECK-SAME: passthrough = [["prefer-vector-width", "256"], ["min-legal-vector-width", "256"]]
// CHECK: llvm.func @expf(f32) -> f32
// CHECK-NOT: passthrough
module attributes {helion.vector_width = 256 : i64} {
  llvm.func @kernel(%x: f32) -> f32 attributes {passthrough = ["nounwind", ["prefer-vector-width", "512"]]} {
    %0 = llvm.call @expf(%x) : (f32) -> f32
    llvm.return %0 : f32
  }
  llvm.func @region() {
    llvm.return
  }
  llvm.func @expf(f32) -> f32
}

// -----

// Without the attribute nothing changes: LLVM keeps its own widths.
// CHECK-LABEL: llvm.func @plain(
// CHECK-NOT: passthrough
module {
  llvm.func @plain() {
    llvm.return
  }
}
