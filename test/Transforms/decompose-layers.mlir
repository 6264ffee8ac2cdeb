// RUN: xlnet-opt %s --split-input-file --xlnet-decompose-layers | FileCheck %s

// Shapes: B=2 S=4 NP=2 M=2 (K=6, R=10) D=4 N=2 H=2 I=8, one positional copy.

// A layer with incoming memory: keys and values come from [mems ; h], the
// memory cache is built from the layer's input h, the content stream runs on
// all positions without rows, the query stream on the prediction rows.
// CHECK-LABEL: func.func @layer_with_mems
// CHECK-SAME: (%[[H:[^:]+]]: tensor<2x4x4xf32>, %[[G:[^:]+]]: tensor<2x2x4xf32>, %[[MEMS:[^:]+]]: tensor<2x2x4xf32>, %[[POS:[^:]+]]: tensor<1x10x4xf32>, %[[SEG:[^:]+]]: tensor<2x4x6xi1>, %[[MASK_H:[^:]+]]: tensor<2x4x6xi1>, %[[MASK_G:[^:]+]]: tensor<2x4x6xi1>, %[[ROWS:[^:]+]]: tensor<2x2xi64>, %[[WQ:[^:]+]]: tensor<4x2x2xf32>, %[[WK:[^:]+]]: tensor<4x2x2xf32>, %[[WV:[^:]+]]: tensor<4x2x2xf32>, %[[WO:[^:]+]]: tensor<4x2x2xf32>, %[[WR:[^:]+]]: tensor<4x2x2xf32>
// CHECK-NOT: xlnet.two_stream_layer
// CHECK: %[[NEW_MEMS:.+]] = xlnet.mem_cache mems %[[MEMS]], %[[H]] reuse_len = 2 mem_len = 3 : (tensor<2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<3x2x4xf32>
// CHECK: %[[CAT:.+]] = xlnet.mem_concat %[[MEMS]], %[[H]] : (tensor<2x2x4xf32>, tensor<2x4x4xf32>) -> tensor<2x6x4xf32>
// CHECK: %[[K:.+]] = xlnet.head_proj %[[CAT]], %[[WK]] : (tensor<2x6x4xf32>, tensor<4x2x2xf32>) -> tensor<2x6x2x2xf32>
// CHECK: %[[V:.+]] = xlnet.head_proj %[[CAT]], %[[WV]]
// CHECK: %[[KR:.+]] = xlnet.head_proj %[[POS]], %[[WR]] : (tensor<1x10x4xf32>, tensor<4x2x2xf32>) -> tensor<1x10x2x2xf32>
// CHECK: %[[QH:.+]] = xlnet.head_proj %[[H]], %[[WQ]]
// CHECK: %[[ATT_H:.+]] = xlnet.rel_attention q(%[[QH]]) k(%[[K]]) v(%[[V]]) k_r(%[[KR]]) {{.*}} seg_mat(%[[SEG]]) mask(%[[MASK_H]]) scale = 0.70710678118654746 dropatt = 0.000000e+00
// CHECK: %[[POST_H:.+]] = xlnet.post_attention %[[ATT_H]] residual %[[H]] weight %[[WO]]
// CHECK: %[[H_OUT:.+]] = xlnet.ffn %[[POST_H]] {{.*}} activation = gelu_tanh
// CHECK: %[[QG:.+]] = xlnet.head_proj %[[G]], %[[WQ]]
// CHECK: %[[ATT_G:.+]] = xlnet.rel_attention q(%[[QG]]) k(%[[K]]) v(%[[V]]) k_r(%[[KR]]) {{.*}} mask(%[[MASK_G]]) rows(%[[ROWS]])
// CHECK: %[[POST_G:.+]] = xlnet.post_attention %[[ATT_G]] residual %[[G]] weight %[[WO]]
// CHECK: %[[G_OUT:.+]] = xlnet.ffn %[[POST_G]]
// CHECK: return %[[H_OUT]], %[[G_OUT]], %[[NEW_MEMS]]
func.func @layer_with_mems(%h: tensor<2x4x4xf32>, %g: tensor<2x2x4xf32>, %mems: tensor<2x2x4xf32>,
    %pos: tensor<1x10x4xf32>, %seg: tensor<2x4x6xi1>, %mask_h: tensor<2x4x6xi1>, %mask_g: tensor<2x4x6xi1>,
    %rows: tensor<2x2xi64>, %wq: tensor<4x2x2xf32>, %wk: tensor<4x2x2xf32>, %wv: tensor<4x2x2xf32>,
    %wo: tensor<4x2x2xf32>, %wr: tensor<4x2x2xf32>, %rw: tensor<2x2xf32>, %rr: tensor<2x2xf32>,
    %rs: tensor<2x2xf32>, %se: tensor<2x2x2xf32>, %aw: tensor<4xf32>, %ab: tensor<4xf32>,
    %w1: tensor<8x4xf32>, %b1: tensor<8xf32>, %w2: tensor<4x8xf32>, %b2: tensor<4xf32>,
    %fw: tensor<4xf32>, %fb: tensor<4xf32>) -> (tensor<2x4x4xf32>, tensor<2x2x4xf32>, tensor<3x2x4xf32>) {
  %h1, %g1, %m1 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos) seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se) attn_ln(%aw, %ab)
      ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation gelu_tanh>, dropatt = 0.0 : f64, dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 3 : i64, reuse_len = 2 : i64}
      : (tensor<2x4x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>, tensor<1x10x4xf32>, tensor<2x4x6xi1>, tensor<2x4x6xi1>, tensor<2x4x6xi1>, tensor<2x2xi64>,
         tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>,
         tensor<2x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> (tensor<2x4x4xf32>, tensor<2x2x4xf32>, tensor<3x2x4xf32>)
  return %h1, %g1, %m1 : tensor<2x4x4xf32>, tensor<2x2x4xf32>, tensor<3x2x4xf32>
}

// -----

// No incoming memory and mem_len = 0: no mem_concat (keys come from h) and
// no mem_cache.
// CHECK-LABEL: func.func @layer_without_mems
// CHECK-SAME: (%[[H:[^:]+]]: tensor<2x4x4xf32>
// CHECK-NOT: xlnet.mem_cache
// CHECK-NOT: xlnet.mem_concat
// CHECK: xlnet.head_proj %[[H]], %{{.+}} : (tensor<2x4x4xf32>, tensor<4x2x2xf32>) -> tensor<2x4x2x2xf32>
// CHECK-NOT: xlnet.two_stream_layer
// CHECK: return
func.func @layer_without_mems(%h: tensor<2x4x4xf32>, %g: tensor<2x2x4xf32>,
    %pos: tensor<1x8x4xf32>, %seg: tensor<2x4x4xi1>, %mask_h: tensor<2x4x4xi1>, %mask_g: tensor<2x4x4xi1>,
    %rows: tensor<2x2xi64>, %wq: tensor<4x2x2xf32>, %wk: tensor<4x2x2xf32>, %wv: tensor<4x2x2xf32>,
    %wo: tensor<4x2x2xf32>, %wr: tensor<4x2x2xf32>, %rw: tensor<2x2xf32>, %rr: tensor<2x2xf32>,
    %rs: tensor<2x2xf32>, %se: tensor<2x2x2xf32>, %aw: tensor<4xf32>, %ab: tensor<4xf32>,
    %w1: tensor<8x4xf32>, %b1: tensor<8xf32>, %w2: tensor<4x8xf32>, %b2: tensor<4xf32>,
    %fw: tensor<4xf32>, %fb: tensor<4xf32>) -> (tensor<2x4x4xf32>, tensor<2x2x4xf32>) {
  %h1, %g1 = xlnet.two_stream_layer h(%h) g(%g) pos(%pos) seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se) attn_ln(%aw, %ab)
      ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64, dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 0 : i64, reuse_len = 4 : i64}
      : (tensor<2x4x4xf32>, tensor<2x2x4xf32>, tensor<1x8x4xf32>, tensor<2x4x4xi1>, tensor<2x4x4xi1>, tensor<2x4x4xi1>, tensor<2x2xi64>,
         tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>,
         tensor<2x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> (tensor<2x4x4xf32>, tensor<2x2x4xf32>)
  return %h1, %g1 : tensor<2x4x4xf32>, tensor<2x2x4xf32>
}

// -----

// The content stream's output unused (the last layer of a training step:
// the loss reads the query stream, the memory is the layer's input): only
// the memory, k, v, k_r and the query stream are built.
// CHECK-LABEL: func.func @content_output_unused
// CHECK-SAME: (%[[H:[^:]+]]: tensor<2x4x4xf32>, %[[G:[^:]+]]: tensor<2x2x4xf32>
// CHECK: xlnet.mem_cache
// CHECK-NOT: xlnet.rel_attention
// CHECK-NOT: xlnet.post_attention
// CHECK-NOT: xlnet.ffn
// CHECK: xlnet.head_proj %[[G]]
// CHECK-NEXT: xlnet.rel_attention {{.*}} rows(
// CHECK-NEXT: xlnet.post_attention
// CHECK-NEXT: %[[G_OUT:.+]] = xlnet.ffn
// CHECK-NOT: xlnet.rel_attention
// CHECK: return %[[G_OUT]], %{{.+}} : tensor<2x2x4xf32>, tensor<3x2x4xf32>
func.func @content_output_unused(%h: tensor<2x4x4xf32>, %g: tensor<2x2x4xf32>, %mems: tensor<2x2x4xf32>,
    %pos: tensor<1x10x4xf32>, %seg: tensor<2x4x6xi1>, %mask_h: tensor<2x4x6xi1>, %mask_g: tensor<2x4x6xi1>,
    %rows: tensor<2x2xi64>, %wq: tensor<4x2x2xf32>, %wk: tensor<4x2x2xf32>, %wv: tensor<4x2x2xf32>,
    %wo: tensor<4x2x2xf32>, %wr: tensor<4x2x2xf32>, %rw: tensor<2x2xf32>, %rr: tensor<2x2xf32>,
    %rs: tensor<2x2xf32>, %se: tensor<2x2x2xf32>, %aw: tensor<4xf32>, %ab: tensor<4xf32>,
    %w1: tensor<8x4xf32>, %b1: tensor<8xf32>, %w2: tensor<4x8xf32>, %b2: tensor<4xf32>,
    %fw: tensor<4xf32>, %fb: tensor<4xf32>) -> (tensor<2x2x4xf32>, tensor<3x2x4xf32>) {
  %h1, %g1, %m1 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos) seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se) attn_ln(%aw, %ab)
      ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation gelu_tanh>, dropatt = 0.0 : f64, dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 3 : i64, reuse_len = 2 : i64}
      : (tensor<2x4x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>, tensor<1x10x4xf32>, tensor<2x4x6xi1>, tensor<2x4x6xi1>, tensor<2x4x6xi1>, tensor<2x2xi64>,
         tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<4x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>,
         tensor<2x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> (tensor<2x4x4xf32>, tensor<2x2x4xf32>, tensor<3x2x4xf32>)
  return %g1, %m1 : tensor<2x2x4xf32>, tensor<3x2x4xf32>
}
