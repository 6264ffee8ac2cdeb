// RUN: xlnet-opt %s --split-input-file --xlnet-apply-optimizer --verify-diagnostics
// RUN: not xlnet-opt %s --split-input-file --xlnet-apply-optimizer="decay=linear" 2>&1 | FileCheck %s --check-prefix=OPTION

// The optimizer updates gradients: a step that was not differentiated has none.
// expected-error @+1 {{'func.func' op has no gradient results (grad.<param>); run --xlnet-differentiate first}}
func.func @not_differentiated(%w: tensor<3xf32> {xlnet.param = "w"}) -> (tensor<3xf32> {xlnet.output = "hidden"}) {
  return %w : tensor<3xf32>
}

// -----

// A gradient must belong to a parameter of the function.
// expected-error @+1 {{'func.func' op result #0 ("grad.v") is the gradient of no parameter}}
func.func @unknown_param(%w: tensor<3xf32> {xlnet.param = "w"}) -> (tensor<3xf32> {xlnet.output = "grad.v"}) {
  return %w : tensor<3xf32>
}

// -----

// Every parameter needs its gradient, or it would silently never train.
// expected-error @+1 {{'func.func' op has gradients for 1 of 2 parameters}}
func.func @missing_grad(%w: tensor<3xf32> {xlnet.param = "w"}, %u: tensor<3xf32> {xlnet.param = "u"})
    -> (tensor<3xf32> {xlnet.output = "grad.w"}) {
  return %w : tensor<3xf32>
}

// OPTION: error: 'func.func' op invalid optimizer option: decay must be 'poly' or 'cos', got 'linear'
