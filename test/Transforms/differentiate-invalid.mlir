// RUN: xlnet-opt %s --split-input-file --allow-unregistered-dialect --xlnet-differentiate --verify-diagnostics

// Nothing to differentiate: no result is named "loss".
// expected-error @+1 {{'func.func' op has no result named 'loss' (xlnet.output = "loss") to differentiate}}
func.func @no_loss(%w: tensor<4x4xf32> {xlnet.param = "w"}) -> (tensor<4x4xf32> {xlnet.output = "hidden"}) {
  return %w : tensor<4x4xf32>
}

// -----

// The loss must come from xlnet.lm_loss (the only loss with a gradient rule).
// expected-error @+1 {{'func.func' op the 'loss' result must be the loss of an xlnet.lm_loss}}
func.func @loss_not_lm_loss(%l: tensor<f32> {xlnet.param = "l"}) -> (tensor<f32> {xlnet.output = "loss"}) {
  return %l : tensor<f32>
}

// -----

// Differentiating twice would differentiate the gradients.
// expected-error @+1 {{'func.func' op is already differentiated (result #1 is "grad.w")}}
func.func @twice(%w: tensor<4xf32> {xlnet.param = "w"}) -> (tensor<f32> {xlnet.output = "loss"}, tensor<4xf32> {xlnet.output = "grad.w"}) {
  %c = "test.loss"() : () -> tensor<f32>
  return %c, %w : tensor<f32>, tensor<4xf32>
}

// -----

// Model-level ops have no gradient rule of their own: lower them first.
func.func @model_level(%x: tensor<2x2x4xf32> {xlnet.input = "x"}, %w: tensor<4x2x2xf32> {xlnet.param = "w"},
    %e: tensor<5x4xf32> {xlnet.param = "e"}, %b: tensor<5xf32> {xlnet.param = "b"},
    %t: tensor<2x2xi64> {xlnet.input = "target"}, %m: tensor<2x2xf32> {xlnet.input = "target_mask"})
    -> (tensor<f32> {xlnet.output = "loss"}) {
  %p = xlnet.gemm %x, %w : (tensor<2x2x4xf32>, tensor<4x2x2xf32>) -> tensor<2x2x2x2xf32>
  %o = xlnet.gemm %p, %w {k_rank = 2 : i64, transpose_w} : (tensor<2x2x2x2xf32>, tensor<4x2x2xf32>) -> tensor<2x2x4xf32>
  // expected-error @+1 {{'xlnet.lm_head' op is not kernel-level; run --xlnet-lower-to-kernels before --xlnet-differentiate}}
  %l = xlnet.lm_head %o, %e, %b : (tensor<2x2x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<2x2x5xf32>
  %loss, %ptl = xlnet.lm_loss %l, %t, %m : (tensor<2x2x5xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> (tensor<f32>, tensor<2x2xf32>)
  return %loss : tensor<f32>
}

// -----

// A parameter the loss does not depend on has no gradient: an error, not a
// silent zero.
// expected-error @+1 {{'func.func' op parameter 'unused' does not influence the loss, so it has no gradient}}
func.func @unused_param(%x: tensor<2x2x4xf32> {xlnet.input = "x"}, %e: tensor<5x4xf32> {xlnet.param = "e"},
    %u: tensor<4xf32> {xlnet.param = "unused"},
    %t: tensor<2x2xi64> {xlnet.input = "target"}, %m: tensor<2x2xf32> {xlnet.input = "target_mask"})
    -> (tensor<f32> {xlnet.output = "loss"}) {
  %l = xlnet.gemm %x, %e {transpose_w} : (tensor<2x2x4xf32>, tensor<5x4xf32>) -> tensor<2x2x5xf32>
  %loss, %ptl = xlnet.lm_loss %l, %t, %m : (tensor<2x2x5xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> (tensor<f32>, tensor<2x2xf32>)
  return %loss : tensor<f32>
}

// -----

// The loss must depend on a parameter.
// expected-error @+1 {{'func.func' op the loss does not depend on any parameter}}
func.func @constant_loss(%l: tensor<2x2x5xf32> {xlnet.input = "logits"},
    %t: tensor<2x2xi64> {xlnet.input = "target"}, %m: tensor<2x2xf32> {xlnet.input = "target_mask"})
    -> (tensor<f32> {xlnet.output = "loss"}) {
  %loss, %ptl = xlnet.lm_loss %l, %t, %m : (tensor<2x2x5xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> (tensor<f32>, tensor<2x2xf32>)
  return %loss : tensor<f32>
}
