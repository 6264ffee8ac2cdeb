// RUN: xlnet-opt %s --split-input-file --xlnet-accumulate-gradients --verify-diagnostics

// Accumulation sums gradients: a step that was not differentiated has no
// loss gradient to divide by the micro-batches' count.
// expected-error @+1 {{'func.func' op has 0 xlnet.lm_loss_grad ops: gradient accumulation needs exactly one (run --xlnet-differentiate first)}}
func.func @not_differentiated(%w: tensor<3xf32> {xlnet.param = "w"}) -> (tensor<3xf32> {xlnet.output = "hidden"}) {
  return %w : tensor<3xf32>
}

// -----

// A step differentiated but without gradient results.
// expected-error @+1 {{'func.func' op has no gradient results (grad.<param>); run --xlnet-differentiate first}}
func.func @no_grads(%l: tensor<2x5x6xf32> {xlnet.input = "logits"}, %t: tensor<2x5xi64> {xlnet.input = "target"},
    %m: tensor<2x5xf32> {xlnet.input = "target_mask"}) -> (tensor<2x5x6xf32> {xlnet.output = "dlogits"}) {
  %dl = xlnet.lm_loss_grad %l, %t, %m : (tensor<2x5x6xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<2x5x6xf32>
  return %dl : tensor<2x5x6xf32>
}

// -----

// Run twice, the gradients would be summed into two accumulators.
// expected-error @+1 {{'func.func' op already accumulates gradients (it has a 'loss_count' input)}}
func.func @twice(%l: tensor<2x5x6xf32> {xlnet.input = "logits"}, %t: tensor<2x5xi64> {xlnet.input = "target"},
    %m: tensor<2x5xf32> {xlnet.input = "target_mask"}, %c: tensor<f32> {xlnet.input = "loss_count"})
    -> (tensor<2x5x6xf32> {xlnet.output = "grad.l"}) {
  %dl = xlnet.lm_loss_grad %l, %t, %m, %c : (tensor<2x5x6xf32>, tensor<2x5xi64>, tensor<2x5xf32>, tensor<f32>) -> tensor<2x5x6xf32>
  return %dl : tensor<2x5x6xf32>
}
