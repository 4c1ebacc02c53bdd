// Masked loads, selects, and loads and stores of bf16 vectors become the same ops on i16
// between bitcasts (x86 without bf16 instructions has no legal bf16 moves; LLVM aborted on a
// 97-lane bf16 store); scalar loads and stores and other bf16 ops are left alone.
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
// CHECK-NEXT: %[[STORED16:[a-z0-9_]+]] = llvm.bitcast %[[LOAD]] : vector<8xbf16> to vector<8xi16>
// CHECK-NEXT: llvm.store %[[STORED16]], %[[Q]] : vector<8xi16>, !llvm.ptr
// CHECK-NEXT: llvm.store %[[SEL]], %[[Q]] : bf16, !llvm.ptr
// CHECK-NEXT: %[[ROW16:[a-z0-9_]+]] = llvm.load %[[P]] {alignment = 2 : i64} : !llvm.ptr -> vector<97xi16>
// CHECK-NEXT: %[[ROW:[a-z0-9_]+]] = llvm.bitcast %[[ROW16]] : vector<97xi16> to vector<97xbf16>
// CHECK-NEXT: %[[ROW16_AGAIN:[a-z0-9_]+]] = llvm.bitcast %[[ROW]] : vector<97xbf16> to vector<97xi16>
// CHECK-NEXT: llvm.store %[[ROW16_AGAIN]], %[[Q]] {alignment = 2 : i64} : vector<97xi16>, !llvm.ptr
// CHECK-NEXT: %[[ONE:[a-z0-9_]+]] = llvm.load %[[P]] : !llvm.ptr -> bf16
// CHECK-NEXT: llvm.store %[[ONE]], %[[Q]] : bf16, !llvm.ptr
llvm.func @moves(%p: !llvm.ptr, %q: !llvm.ptr, %mask: vector<8xi1>, %pass: vector<8xbf16>, %c: i1, %a: bf16, %b: bf16) {
  %v = llvm.intr.masked.load %p, %mask, %pass {alignment = 2 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xbf16>) -> vector<8xbf16>
  %s = llvm.select %c, %a, %b : i1, bf16
  llvm.store %v, %q : vector<8xbf16>, !llvm.ptr
  llvm.store %s, %q : bf16, !llvm.ptr
  %row = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> vector<97xbf16>
  llvm.store %row, %q {alignment = 2 : i64} : vector<97xbf16>, !llvm.ptr
  %one = llvm.load %p : !llvm.ptr -> bf16
  llvm.store %one, %q : bf16, !llvm.ptr
  llvm.return
}

// CHECK-LABEL: llvm.func @f32_select(
// CHECK-NEXT: llvm.select %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : i1, f32
llvm.func @f32_select(%c: i1, %a: f32, %b: f32) -> f32 {
  %s = llvm.select %c, %a, %b : i1, f32
  llvm.return %s : f32
}
