// RUN: xlnet-opt %s --split-input-file --xlnet-mixed-precision --verify-diagnostics

// A model-level op: the pass runs on kernel-level ops only.
func.func @model_level(%g: tensor<2x5x32xf32>, %word_emb: tensor<64x32xf32>,
                       %lm_bias: tensor<64xf32>) -> tensor<2x5x64xf32> {
  // expected-error @+1 {{'xlnet.lm_head' op is a model-level op: --xlnet-mixed-precision runs on kernel-level ops (run --xlnet-lower-to-kernels first)}}
  %0 = xlnet.lm_head %g, %word_emb, %lm_bias
      : (tensor<2x5x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}
