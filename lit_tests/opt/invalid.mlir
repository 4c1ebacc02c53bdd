// Invalid uses of the helion and loom ops, and ops no registered dialect defines: every
// diagnostic is located and expected (mlir-opt's --verify-diagnostics conventions).
// RUN: helion-opt %s --verify-diagnostics --split-input-file

// helion.phi: init, loop result and result have one type.
func.func @phi_types(%init: tensor<4xf32>, %loop: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @below {{expected 'tensor<4xf32>' but got 'tensor<4xf16>'}}
  %0 = "helion.phi"(%init, %loop) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @phi_one_operand(%init: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{op expects exactly 2 operands, but got 1}}
  %0 = "helion.phi"(%init) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @symbol_without_name() -> index {
  %0 = "loom.get_symbol"() : () -> index // expected-error {{'loom.get_symbol' op attribute "name" is expected but not provided}}
  return %0 : index
}

// -----

func.func @symbol_not_index() -> i32 {
  %0 = "loom.get_symbol"() {name = "block_size_0"} : () -> i32
  // expected-error @-1 {{expected 'index' but got 'i32'}}
  return %0 : i32
}

// -----

// Our own dialects never need --allow-unregistered-dialect; their unknown ops are errors.
func.func @unknown_helion_op() {
  // expected-error @below {{unregistered operation 'helion.nope' found in dialect ('helion')}}
  "helion.nope"() : () -> ()
  return
}

// -----

func.func @unknown_dialect() {
  "foreign.op"() : () -> ()
  // expected-error @above {{operation being parsed with an unregistered dialect}}
  return
}

// -----

func.func @unknown_torch_op(%a: !torch.vtensor<[4],f32>) {
  // expected-error @below {{custom op 'torch.aten.not_an_op' is unknown}}
  %0 = torch.aten.not_an_op %a : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return
}
