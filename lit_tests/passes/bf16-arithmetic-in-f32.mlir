// Arithmetic on bf16 vectors runs on the operands' f32 extensions, the result rounded back
// to bf16 after each op (as LLVM's own promotion does, which aborted on a 9-lane add); a
// compare keeps its mask; f32 arithmetic and scalar bf16 arithmetic are left alone.
// RUN: helion-opt %s --helion-bf16-arithmetic-in-f32 | FileCheck %s

// CHECK-LABEL: llvm.func @arithmetic(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: vector<9xbf16>, %[[B:[a-z0-9_]+]]: vector<9xbf16>, %[[X:[a-z0-9_]+]]: vector<9xf32>, %[[S:[a-z0-9_]+]]: bf16
// CHECK-NEXT: %[[AW:[a-z0-9_]+]] = llvm.fpext %[[A]] : vector<9xbf16> to vector<9xf32>
// CHECK-NEXT: %[[BW:[a-z0-9_]+]] = llvm.fpext %[[B]] : vector<9xbf16> to vector<9xf32>
// CHECK-NEXT: %[[SUMW:[a-z0-9_]+]] = llvm.fadd %[[AW]], %[[BW]] : vector<9xf32>
// CHECK-NEXT: %[[SUM:[a-z0-9_]+]] = llvm.fptrunc %[[SUMW]] : vector<9xf32> to vector<9xbf16>
// CHECK-NEXT: %[[SW:[a-z0-9_]+]] = llvm.fpext %[[SUM]] : vector<9xbf16> to vector<9xf32>
// CHECK-NEXT: %[[AW2:[a-z0-9_]+]] = llvm.fpext %[[A]] : vector<9xbf16> to vector<9xf32>
// CHECK-NEXT: %[[PRODW:[a-z0-9_]+]] = llvm.fmul %[[SW]], %[[AW2]] : vector<9xf32>
// CHECK-NEXT: %[[PROD:[a-z0-9_]+]] = llvm.fptrunc %[[PRODW]] : vector<9xf32> to vector<9xbf16>
// CHECK-NEXT: %[[PW:[a-z0-9_]+]] = llvm.fpext %[[PROD]] : vector<9xbf16> to vector<9xf32>
// CHECK-NEXT: %[[BW2:[a-z0-9_]+]] = llvm.fpext %[[B]] : vector<9xbf16> to vector<9xf32>
// CHECK-NEXT: %[[LESS:[a-z0-9_]+]] = llvm.fcmp "olt" %[[PW]], %[[BW2]] : vector<9xf32>
// CHECK-NEXT: llvm.fadd %[[X]], %[[X]] : vector<9xf32>
// CHECK-NEXT: llvm.fadd %[[S]], %[[S]] : bf16
// CHECK-NEXT: llvm.return %[[LESS]] : vector<9xi1>
llvm.func @arithmetic(%a: vector<9xbf16>, %b: vector<9xbf16>, %x: vector<9xf32>, %s: bf16) -> vector<9xi1> {
  %sum = llvm.fadd %a, %b : vector<9xbf16>
  %prod = llvm.fmul %sum, %a : vector<9xbf16>
  %less = llvm.fcmp "olt" %prod, %b : vector<9xbf16>
  %wide = llvm.fadd %x, %x : vector<9xf32>
  %scalar = llvm.fadd %s, %s : bf16
  llvm.return %less : vector<9xi1>
}
