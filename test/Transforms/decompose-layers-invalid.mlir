// RUN: xlnet-opt %s --split-input-file --xlnet-decompose-layers --verify-diagnostics

// The verifier accepts dynamic dims, but decomposition computes every
// intermediate type from the operands and needs them static.
func.func @dynamic_batch(%h: tensor<?x4x4xf32>, %g: tensor<2x2x4xf32>,
    %pos: tensor<1x8x4xf32>, %seg: tensor<2x4x4xi1>, %mask_h: tensor<2x4x4xi1>, %mask_g: tensor<2x4x4xi1>,
    %rows: tensor<2x2xi64>, %wq: tensor<4x2x2xf32>, %wk: tensor<4x2x2xf32>, %wv: tensor<4x2x2xf32>,
    %wo: tensor<4x2x2xf32>, %wr: tensor<4x2x2xf32>, %rw: tensor<2x2xf32>, %rr: tensor<2x2xf32>,
    %rs: tensor<2x2xf32>, %se: tensor<2x2x2xf32>, %aw: tensor<4xf32>, %ab: tensor<4xf32>,
    %w1: tensor<8x4xf32>, %b1: tensor<8xf32>, %w2: tensor<4x8xf32>, %b2: tensor<4xf32>,
    %fw: tensor<4xf32>, %fb: tensor<4xf32>) -> (tensor<2x4x4xf32>, tensor<2x2x4xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op requires static shapes, but operand #0 has type 'tensor<?x4x4xf32>'}}
  %h1, %g1 = xlnet.two_stream_layer h(%h) g(%g) pos(%pos) seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se) attn_ln(%aw, %ab)
      ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64, dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 0 : i64, reuse_len = 4 : i64}
      : (tensor<?x4x4xf32>, tensor<2x2x4xf32>, tensor<1x8x4xf32>, tensor<2x4x4xi1>, tensor<2x4x4xi1>, tensor<2x4x4xi1>, tensor<2x2xi64>,
         tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>,
         tensor<2x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> (tensor<2x4x4xf32>, tensor<2x2x4xf32>)
  return %h1, %g1 : tensor<2x4x4xf32>, tensor<2x2x4xf32>
}
