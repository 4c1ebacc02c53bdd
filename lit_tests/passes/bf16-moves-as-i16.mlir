// Masked loads and selects of bf16 values become the same ops on i16 between bitcasts
// (x86 without bf16 instructions has no legal bf16 moves); other bf16 ops are left alone.
// RUN: helion-opt %s --helion-bf16-moves-as-i16 | FileCheck %s

// CHECK-LABEL: llvm.func @moves(
// CHECK-SAME: %[[P:[a-z0-9_]+]]: !llvm.ptr, %[[Q:[a-z0-9_]+]]: !llvm.ptr, %[[MASK:[a-z0-9_]+]]: vector<8xi1>, %[[PASS:[a-z0-9_]+]]: vector<8xbf16>, %[[C:[a-z0-9_]+]]: i1, %[[A:[a-z0-9_]+]]: bf16, %[[B:[a-z0-9_]+]]: bf16
// CHECK-NEXT: %[[PASS16:[a-z0-9_]+]] = llvm.bitcast %[[PASS]] : vector<8xbf16> to vector<8xi16>
// CHECK-NEXT: %[[LOAD16:[a-z0-9_]+]] = llvm.intr.masked.load %[[P]], %[[MASK]], %[[PASS16]] {alignment = 2 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xi16>) -> vector<8xi16>
// CHECK-NEXT: %[[LOAD:[a-z0-9_]+]] = llvm.bitcast %[[LOAD16]] : vector<8xi16> to vector<8xbf16>
// CHECK-NEXT: %[[A16:[a-z0-9_]+]] = llvm.bitcast %[[A]] : bf16 to i16
// CHECK-NEXT: %[[B16:[a-z0-9_]+]] = llvm.bitcast %[[B]] : bf16 to i16
// CHECK-NEXT: %[[SEL16:[a-z0-9_]+]] = llvm.select %[[C]], %[[A16]], %[[B16]] : i1, i16
// CHECK-NEXT: %[[SEL:[a-z0-9_]+]] = llvm.bitcast %[[SEL16]] : i16 to bf16
// CHECK-NEXT: llvm.store %[[LOAD]], %[[Q]] : vector<8xbf16>, !llvm.ptr
// CHECK-NEXT: llvm.store %[[SEL]], %[[Q]] : bf16, !llvm.ptr
llvm.func @moves(%p: !llvm.ptr, %q: !llvm.ptr, %mask: vector<8xi1>, %pass: vector<8xbf16>, %c: i1, %a: bf16, %b: bf16) {
  %v = llvm.intr.masked.load %p, %mask, %pass {alignment = 2 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xbf16>) -> vector<8xbf16>
  %s = llvm.select %c, %a, %b : i1, bf16
  llvm.store %v, %q : vector<8xbf16>, !llvm.ptr
  llvm.store %s, %q : bf16, !llvm.ptr
  llvm.return
}

// CHECK-LABEL: llvm.func @f32_select(
// CHECK-NEXT: llvm.select %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : i1, f32
llvm.func @f32_select(%c: i1, %a: f32, %b: f32) -> f32 {
  %s = llvm.select %c, %a, %b : i1, f32
  llvm.return %s : f32
}
