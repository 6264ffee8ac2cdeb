// RUN: xlnet-opt %s | FileCheck %s
// The printed custom form re-parses to the same IR.
// RUN: xlnet-opt %s | xlnet-opt | FileCheck %s
// The generic form parses back to the same IR.
// RUN: xlnet-opt %s --mlir-print-op-generic | xlnet-opt | FileCheck %s

// Round trip of every op of the `xlnet` dialect. Shapes follow the tiny model
// used by the golden tests: B = 2, S = 16, M = 8, K = M + S = 24,
// R = K + S = 40, D = 32, N = 2, H = 16, I = 48, V = 64, NP = 5.

module {

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

// Word embedding lookup: ids [B, S] and table [V, D] give [B, S, D].
// CHECK-LABEL: func.func @embedding(
// CHECK-SAME:    %[[IDS:[^:]+]]: tensor<2x16xi64>, %[[TABLE:[^:]+]]: tensor<64x32xf32>)
// CHECK:         %[[EMB:.+]] = xlnet.embedding %[[IDS]], %[[TABLE]] : (tensor<2x16xi64>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
// CHECK:         return %[[EMB]]
func.func @embedding(%ids: tensor<2x16xi64>, %table: tensor<64x32xf32>) -> tensor<2x16x32xf32> {
  %0 = xlnet.embedding %ids, %table : (tensor<2x16xi64>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
  return %0 : tensor<2x16x32xf32>
}

// Dynamic dimensions are accepted: the verifiers skip `?` sizes.
// CHECK-LABEL: func.func @embedding_dynamic(
// CHECK-SAME:    %[[IDS:[^:]+]]: tensor<?x?xi64>, %[[TABLE:[^:]+]]: tensor<?x32xf32>)
// CHECK:         %[[EMB:.+]] = xlnet.embedding %[[IDS]], %[[TABLE]] : (tensor<?x?xi64>, tensor<?x32xf32>) -> tensor<2x?x32xf32>
// CHECK:         return %[[EMB]]
func.func @embedding_dynamic(%ids: tensor<?x?xi64>, %table: tensor<?x32xf32>) -> tensor<2x?x32xf32> {
  %0 = xlnet.embedding %ids, %table : (tensor<?x?xi64>, tensor<?x32xf32>) -> tensor<2x?x32xf32>
  return %0 : tensor<2x?x32xf32>
}

// mask_emb [1, 1, D] broadcast to the query stream [B, NP, D].
// CHECK-LABEL: func.func @mask_embedding(
// CHECK-SAME:    %[[MASK_EMB:[^:]+]]: tensor<1x1x32xf32>)
// CHECK:         %[[G0:.+]] = xlnet.mask_embedding %[[MASK_EMB]] : (tensor<1x1x32xf32>) -> tensor<2x5x32xf32>
// CHECK:         return %[[G0]]
func.func @mask_embedding(%mask_emb: tensor<1x1x32xf32>) -> tensor<2x5x32xf32> {
  %0 = xlnet.mask_embedding %mask_emb : (tensor<1x1x32xf32>) -> tensor<2x5x32xf32>
  return %0 : tensor<2x5x32xf32>
}

//===----------------------------------------------------------------------===//
// Positions and masks
//===----------------------------------------------------------------------===//

// Without bi_data there is one positional copy: [1, klen + qlen, D]. The
// optional `bi_data` keyword is not printed.
// CHECK-LABEL: func.func @rel_pos_encoding(
// CHECK:         %[[POS:.+]] = xlnet.rel_pos_encoding klen = 24 qlen = 16 clamp_len = -1 : tensor<1x40x32xf32>
// CHECK-NOT:     bi_data
// CHECK:         return %[[POS]]
func.func @rel_pos_encoding() -> tensor<1x40x32xf32> {
  %0 = xlnet.rel_pos_encoding klen = 24 qlen = 16 clamp_len = -1 : tensor<1x40x32xf32>
  return %0 : tensor<1x40x32xf32>
}

// With bi_data there are two copies ([2, R, D]); clamp_len > 0 clips the
// positions. klen = qlen is the no-memory case.
// CHECK-LABEL: func.func @rel_pos_encoding_bi_data(
// CHECK:         %[[POS:.+]] = xlnet.rel_pos_encoding klen = 16 qlen = 16 clamp_len = 5 bi_data : tensor<2x32x32xf32>
// CHECK:         return %[[POS]]
func.func @rel_pos_encoding_bi_data() -> tensor<2x32x32xf32> {
  %0 = xlnet.rel_pos_encoding klen = 16 qlen = 16 clamp_len = 5 bi_data : tensor<2x32x32xf32>
  return %0 : tensor<2x32x32xf32>
}

// Segment matrix [B, S, mlen + S] from seg_id [B, S].
// CHECK-LABEL: func.func @rel_segment(
// CHECK-SAME:    %[[SEG_ID:[^:]+]]: tensor<2x16xi64>)
// CHECK:         %[[SEG:.+]] = xlnet.rel_segment %[[SEG_ID]] mlen = 8 : (tensor<2x16xi64>) -> tensor<2x16x24xi1>
// CHECK:         return %[[SEG]]
func.func @rel_segment(%seg_id: tensor<2x16xi64>) -> tensor<2x16x24xi1> {
  %0 = xlnet.rel_segment %seg_id mlen = 8 : (tensor<2x16xi64>) -> tensor<2x16x24xi1>
  return %0 : tensor<2x16x24xi1>
}

// The query-stream mask: [B, S, mlen + S] from perm_mask [B, S, S].
// CHECK-LABEL: func.func @attn_mask_query(
// CHECK-SAME:    %[[PERM:[^:]+]]: tensor<2x16x16xf32>)
// CHECK:         %[[MASK_G:.+]] = xlnet.attn_mask query %[[PERM]] mlen = 8 : (tensor<2x16x16xf32>) -> tensor<2x16x24xi1>
// CHECK:         return %[[MASK_G]]
func.func @attn_mask_query(%perm_mask: tensor<2x16x16xf32>) -> tensor<2x16x24xi1> {
  %0 = xlnet.attn_mask query %perm_mask mlen = 8 : (tensor<2x16x16xf32>) -> tensor<2x16x24xi1>
  return %0 : tensor<2x16x24xi1>
}

// The mask of a stream from the permutation's ranks [B, 2, S].
// CHECK-LABEL: func.func @rank_mask_query(
// CHECK-SAME:    %[[RANK:[^:]+]]: tensor<2x2x16xi64>)
// CHECK:         %[[MASK:.+]] = xlnet.rank_mask query %[[RANK]] mlen = 8 : (tensor<2x2x16xi64>) -> tensor<2x16x24xi1>
// CHECK:         return %[[MASK]]
func.func @rank_mask_query(%perm_rank: tensor<2x2x16xi64>) -> tensor<2x16x24xi1> {
  %0 = xlnet.rank_mask query %perm_rank mlen = 8 : (tensor<2x2x16xi64>) -> tensor<2x16x24xi1>
  return %0 : tensor<2x16x24xi1>
}

// The mask of a stream from the bit-packed perm_mask [B, S, ceil(S/64)].
// CHECK-LABEL: func.func @packed_mask(
// CHECK:         xlnet.packed_mask content %{{.+}} mlen = 8 : (tensor<2x70x2xi64>) -> tensor<2x70x78xi1>
func.func @packed_mask(%perm_bits: tensor<2x70x2xi64>) -> tensor<2x70x78xi1> {
  %0 = xlnet.packed_mask content %perm_bits mlen = 8 : (tensor<2x70x2xi64>) -> tensor<2x70x78xi1>
  return %0 : tensor<2x70x78xi1>
}

// The content-stream mask; mlen = 0 (no memory) gives K = S.
// CHECK-LABEL: func.func @attn_mask_content(
// CHECK-SAME:    %[[PERM:[^:]+]]: tensor<2x16x16xf32>)
// CHECK:         %[[MASK_H:.+]] = xlnet.attn_mask content %[[PERM]] mlen = 0 : (tensor<2x16x16xf32>) -> tensor<2x16x16xi1>
// CHECK:         return %[[MASK_H]]
func.func @attn_mask_content(%perm_mask: tensor<2x16x16xf32>) -> tensor<2x16x16xi1> {
  %0 = xlnet.attn_mask content %perm_mask mlen = 0 : (tensor<2x16x16xf32>) -> tensor<2x16x16xi1>
  return %0 : tensor<2x16x16xi1>
}

// One position per prediction slot: target_mapping [B, NP, S] -> [B, NP].
// CHECK-LABEL: func.func @target_positions(
// CHECK-SAME:    %[[MAPPING:[^:]+]]: tensor<2x5x16xf32>)
// CHECK:         %[[ROWS:.+]] = xlnet.target_positions %[[MAPPING]] : (tensor<2x5x16xf32>) -> tensor<2x5xi64>
// CHECK:         return %[[ROWS]]
func.func @target_positions(%target_mapping: tensor<2x5x16xf32>) -> tensor<2x5xi64> {
  %0 = xlnet.target_positions %target_mapping : (tensor<2x5x16xf32>) -> tensor<2x5xi64>
  return %0 : tensor<2x5xi64>
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

// [mems ; h]: time-major mems [M, B, D] and batch-major h [B, S, D] give
// batch-major [B, M + S, D].
// CHECK-LABEL: func.func @mem_concat(
// CHECK-SAME:    %[[MEMS:[^:]+]]: tensor<8x2x32xf32>, %[[H:[^:]+]]: tensor<2x16x32xf32>)
// CHECK:         %[[CAT:.+]] = xlnet.mem_concat %[[MEMS]], %[[H]] : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<2x24x32xf32>
// CHECK:         return %[[CAT]]
func.func @mem_concat(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x32xf32>) -> tensor<2x24x32xf32> {
  %0 = xlnet.mem_concat %mems, %h : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<2x24x32xf32>
  return %0 : tensor<2x24x32xf32>
}

// With incoming memory: L = min(mem_len, M + reuse_len) = min(8, 16) = 8.
// The optional mems operand comes first, followed by a comma.
// CHECK-LABEL: func.func @mem_cache_with_mems(
// CHECK-SAME:    %[[MEMS:[^:]+]]: tensor<8x2x32xf32>, %[[H:[^:]+]]: tensor<2x16x32xf32>)
// CHECK:         %[[NEW_MEMS:.+]] = xlnet.mem_cache mems %[[MEMS]], %[[H]] reuse_len = 8 mem_len = 8 : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<8x2x32xf32>
// CHECK:         return %[[NEW_MEMS]]
func.func @mem_cache_with_mems(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x32xf32>) -> tensor<8x2x32xf32> {
  %0 = xlnet.mem_cache mems %mems, %h reuse_len = 8 mem_len = 8 : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<8x2x32xf32>
  return %0 : tensor<8x2x32xf32>
}

// mem_cache without incoming memory (first segment) does not round-trip with
// the current assembly format `($mems^ `,`)? $h`: the parser takes the lone
// operand for `mems` and then asks for a comma. That case lives in
// mem_cache_without_mems.mlir (XFAIL until the format is fixed).

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

// Projection into heads: x [A, T, D] · W [D, N, H] -> [A, T, N, H]. Shown for
// the query of the content stream and for k_r (from pos_emb, A = P, T = R).
// CHECK-LABEL: func.func @head_proj(
// CHECK-SAME:    %[[H:[^:]+]]: tensor<2x16x32xf32>, %[[POS:[^:]+]]: tensor<1x40x32xf32>, %[[W_Q:[^:]+]]: tensor<32x2x16xf32>, %[[W_R:[^:]+]]: tensor<32x2x16xf32>)
// CHECK:         %[[Q:.+]] = xlnet.head_proj %[[H]], %[[W_Q]] : (tensor<2x16x32xf32>, tensor<32x2x16xf32>) -> tensor<2x16x2x16xf32>
// CHECK:         %[[K_R:.+]] = xlnet.head_proj %[[POS]], %[[W_R]] : (tensor<1x40x32xf32>, tensor<32x2x16xf32>) -> tensor<1x40x2x16xf32>
// CHECK:         return %[[Q]], %[[K_R]]
func.func @head_proj(%h: tensor<2x16x32xf32>, %pos: tensor<1x40x32xf32>,
                     %w_q: tensor<32x2x16xf32>, %w_r: tensor<32x2x16xf32>)
    -> (tensor<2x16x2x16xf32>, tensor<1x40x2x16xf32>) {
  %q = xlnet.head_proj %h, %w_q : (tensor<2x16x32xf32>, tensor<32x2x16xf32>) -> tensor<2x16x2x16xf32>
  %kr = xlnet.head_proj %pos, %w_r : (tensor<1x40x32xf32>, tensor<32x2x16xf32>) -> tensor<1x40x2x16xf32>
  return %q, %kr : tensor<2x16x2x16xf32>, tensor<1x40x2x16xf32>
}

// Content stream: no rows, every position is a query row (T = S).
// CHECK-LABEL: func.func @rel_attention_content(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x16x2x16xf32>, %[[K:[^:]+]]: tensor<2x24x2x16xf32>, %[[V:[^:]+]]: tensor<2x24x2x16xf32>, %[[K_R:[^:]+]]: tensor<1x40x2x16xf32>, %[[SEG_EMBED:[^:]+]]: tensor<2x2x16xf32>, %[[R_W:[^:]+]]: tensor<2x16xf32>, %[[R_R:[^:]+]]: tensor<2x16xf32>, %[[R_S:[^:]+]]: tensor<2x16xf32>, %[[SEG:[^:]+]]: tensor<2x16x24xi1>, %[[MASK_H:[^:]+]]: tensor<2x16x24xi1>)
// CHECK:         %[[ATTN:.+]] = xlnet.rel_attention q(%[[Q]]) k(%[[K]]) v(%[[V]]) k_r(%[[K_R]]) seg_embed(%[[SEG_EMBED]]) biases(%[[R_W]], %[[R_R]], %[[R_S]]) seg_mat(%[[SEG]]) mask(%[[MASK_H]]) scale = 2.500000e-01 dropatt = 0.000000e+00 : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>) -> tensor<2x16x2x16xf32>
// CHECK-NOT:     rows(
// CHECK:         return %[[ATTN]]
func.func @rel_attention_content(%q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>,
                                 %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
                                 %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>,
                                 %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
                                 %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>)
    -> tensor<2x16x2x16xf32> {
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16x24xi1>,
         tensor<2x16x24xi1>) -> tensor<2x16x2x16xf32>
  return %0 : tensor<2x16x2x16xf32>
}

// Query stream: only the NP = 5 prediction slots at positions `rows` (T = NP),
// with bi_data positional keys (P = 2 divides B = 2) and attention dropout.
// CHECK-LABEL: func.func @rel_attention_query_rows(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x5x2x16xf32>, %[[K:[^:]+]]: tensor<2x24x2x16xf32>, %[[V:[^:]+]]: tensor<2x24x2x16xf32>, %[[K_R:[^:]+]]: tensor<2x40x2x16xf32>, %[[SEG_EMBED:[^:]+]]: tensor<2x2x16xf32>, %[[R_W:[^:]+]]: tensor<2x16xf32>, %[[R_R:[^:]+]]: tensor<2x16xf32>, %[[R_S:[^:]+]]: tensor<2x16xf32>, %[[SEG:[^:]+]]: tensor<2x16x24xi1>, %[[MASK_G:[^:]+]]: tensor<2x16x24xi1>, %[[ROWS:[^:]+]]: tensor<2x5xi64>)
// CHECK:         %[[ATTN:.+]] = xlnet.rel_attention q(%[[Q]]) k(%[[K]]) v(%[[V]]) k_r(%[[K_R]]) seg_embed(%[[SEG_EMBED]]) biases(%[[R_W]], %[[R_R]], %[[R_S]]) seg_mat(%[[SEG]]) mask(%[[MASK_G]]) rows(%[[ROWS]]) scale = 2.500000e-01 dropatt = 1.000000e-01 : (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>) -> tensor<2x5x2x16xf32>
// CHECK:         return %[[ATTN]]
func.func @rel_attention_query_rows(%q: tensor<2x5x2x16xf32>, %k: tensor<2x24x2x16xf32>,
                                    %v: tensor<2x24x2x16xf32>, %kr: tensor<2x40x2x16xf32>,
                                    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>,
                                    %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
                                    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>,
                                    %rows: tensor<2x5xi64>) -> tensor<2x5x2x16xf32> {
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask) rows(%rows)
      scale = 0.25 dropatt = 0.1
      : (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<2x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16x24xi1>,
         tensor<2x16x24xi1>, tensor<2x5xi64>) -> tensor<2x5x2x16xf32>
  return %0 : tensor<2x5x2x16xf32>
}

// The optional `site` (the dropatt random stream) is printed in the attribute
// dictionary after dropatt; content stream (no rows).
// CHECK-LABEL: func.func @rel_attention_site(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x16x2x16xf32>, %[[K:[^:]+]]: tensor<2x24x2x16xf32>, %[[V:[^:]+]]: tensor<2x24x2x16xf32>, %[[K_R:[^:]+]]: tensor<1x40x2x16xf32>, %[[SEG_EMBED:[^:]+]]: tensor<2x2x16xf32>, %[[R_W:[^:]+]]: tensor<2x16xf32>, %[[R_R:[^:]+]]: tensor<2x16xf32>, %[[R_S:[^:]+]]: tensor<2x16xf32>, %[[SEG:[^:]+]]: tensor<2x16x24xi1>, %[[MASK_H:[^:]+]]: tensor<2x16x24xi1>)
// CHECK:         %[[ATTN:.+]] = xlnet.rel_attention q(%[[Q]]) k(%[[K]]) v(%[[V]]) k_r(%[[K_R]]) seg_embed(%[[SEG_EMBED]]) biases(%[[R_W]], %[[R_R]], %[[R_S]]) seg_mat(%[[SEG]]) mask(%[[MASK_H]]) scale = 2.500000e-01 dropatt = 1.000000e-01 {site = 7 : i64} : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>) -> tensor<2x16x2x16xf32>
// CHECK:         return %[[ATTN]]
func.func @rel_attention_site(%q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>,
                              %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
                              %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>,
                              %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
                              %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>)
    -> tensor<2x16x2x16xf32> {
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 0.25 dropatt = 0.1 {site = 7 : i64}
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16x24xi1>,
         tensor<2x16x24xi1>) -> tensor<2x16x2x16xf32>
  return %0 : tensor<2x16x2x16xf32>
}

// o-projection, dropout, residual and LayerNorm: attn [B, T, N, H] -> [B, T, D].
// CHECK-LABEL: func.func @post_attention(
// CHECK-SAME:    %[[ATTN:[^:]+]]: tensor<2x16x2x16xf32>, %[[RES:[^:]+]]: tensor<2x16x32xf32>, %[[W_O:[^:]+]]: tensor<32x2x16xf32>, %[[LN_W:[^:]+]]: tensor<32xf32>, %[[LN_B:[^:]+]]: tensor<32xf32>)
// CHECK:         %[[OUT:.+]] = xlnet.post_attention %[[ATTN]] residual %[[RES]] weight %[[W_O]] layer_norm(%[[LN_W]], %[[LN_B]]) eps = 9.9999999999999998E-13 dropout = 1.000000e-01 : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<32x2x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
// CHECK:         return %[[OUT]]
func.func @post_attention(%attn: tensor<2x16x2x16xf32>, %h: tensor<2x16x32xf32>,
                          %w_o: tensor<32x2x16xf32>, %ln_w: tensor<32xf32>,
                          %ln_b: tensor<32xf32>) -> tensor<2x16x32xf32> {
  %0 = xlnet.post_attention %attn residual %h weight %w_o layer_norm(%ln_w, %ln_b)
      eps = 1.0e-12 dropout = 0.1
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<32x2x16xf32>,
         tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return %0 : tensor<2x16x32xf32>
}

//===----------------------------------------------------------------------===//
// Feed-forward and head
//===----------------------------------------------------------------------===//

// Feed-forward with the HuggingFace weight shapes w1 [I, D], w2 [D, I]; the
// activation prints as its bare keyword.
// CHECK-LABEL: func.func @ffn(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x32xf32>, %[[W1:[^:]+]]: tensor<48x32xf32>, %[[B1:[^:]+]]: tensor<48xf32>, %[[W2:[^:]+]]: tensor<32x48xf32>, %[[B2:[^:]+]]: tensor<32xf32>, %[[LN_W:[^:]+]]: tensor<32xf32>, %[[LN_B:[^:]+]]: tensor<32xf32>)
// CHECK:         %[[RELU:.+]] = xlnet.ffn %[[X]] layer_1(%[[W1]], %[[B1]]) layer_2(%[[W2]], %[[B2]]) layer_norm(%[[LN_W]], %[[LN_B]]) activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00 : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
// CHECK:         %[[GELU:.+]] = xlnet.ffn %[[RELU]] layer_1(%[[W1]], %[[B1]]) layer_2(%[[W2]], %[[B2]]) layer_norm(%[[LN_W]], %[[LN_B]]) activation = gelu_tanh eps = 9.9999999999999998E-13 dropout = 1.000000e-01 : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
// CHECK:         %[[ERF:.+]] = xlnet.ffn %[[GELU]] {{.*}} activation = gelu_erf
// CHECK:         return %[[ERF]]
func.func @ffn(%x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>,
               %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %ln_w: tensor<32xf32>,
               %ln_b: tensor<32xf32>) -> tensor<2x16x32xf32> {
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%ln_w, %ln_b)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>,
         tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
      -> tensor<2x16x32xf32>
  %1 = xlnet.ffn %0 layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%ln_w, %ln_b)
      activation = gelu_tanh eps = 1.0e-12 dropout = 0.1
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>,
         tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
      -> tensor<2x16x32xf32>
  %2 = xlnet.ffn %1 layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%ln_w, %ln_b)
      activation = gelu_erf eps = 1.0e-12 dropout = 0.0
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>,
         tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
      -> tensor<2x16x32xf32>
  return %2 : tensor<2x16x32xf32>
}

// Logits of every prediction slot with the tied embedding: [B, NP, V].
// CHECK-LABEL: func.func @lm_head(
// CHECK-SAME:    %[[G:[^:]+]]: tensor<2x5x32xf32>, %[[WORD_EMB:[^:]+]]: tensor<64x32xf32>, %[[LM_BIAS:[^:]+]]: tensor<64xf32>)
// CHECK:         %[[LOGITS:.+]] = xlnet.lm_head %[[G]], %[[WORD_EMB]], %[[LM_BIAS]] : (tensor<2x5x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<2x5x64xf32>
// CHECK:         return %[[LOGITS]]
func.func @lm_head(%g: tensor<2x5x32xf32>, %word_emb: tensor<64x32xf32>,
                   %lm_bias: tensor<64xf32>) -> tensor<2x5x64xf32> {
  %0 = xlnet.lm_head %g, %word_emb, %lm_bias
      : (tensor<2x5x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// Two results: the scalar mean loss and the per-slot loss [B, NP].
// CHECK-LABEL: func.func @lm_loss(
// CHECK-SAME:    %[[LOGITS:[^:]+]]: tensor<2x5x64xf32>, %[[TARGET:[^:]+]]: tensor<2x5xi64>, %[[TARGET_MASK:[^:]+]]: tensor<2x5xf32>)
// CHECK:         %[[LOSS:.+]], %[[PER_TOKEN:.+]] = xlnet.lm_loss %[[LOGITS]], %[[TARGET]], %[[TARGET_MASK]] : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> (tensor<f32>, tensor<2x5xf32>)
// CHECK:         return %[[LOSS]], %[[PER_TOKEN]]
func.func @lm_loss(%logits: tensor<2x5x64xf32>, %target: tensor<2x5xi64>,
                   %target_mask: tensor<2x5xf32>) -> (tensor<f32>, tensor<2x5xf32>) {
  %loss, %ptl = xlnet.lm_loss %logits, %target, %target_mask
      : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>)
      -> (tensor<f32>, tensor<2x5xf32>)
  return %loss, %ptl : tensor<f32>, tensor<2x5xf32>
}

//===----------------------------------------------------------------------===//
// Layer level
//===----------------------------------------------------------------------===//

// A layer with incoming memory (M = 8, K = 24, R = 40) that caches its memory
// for the next step: mem_len = 8 > 0 gives a third result new_mems [L, B, D]
// with L = min(mem_len, M + reuse_len) = 8. The results get the names
// h_out, g_out and new_mems.
// CHECK-LABEL: func.func @two_stream_layer_with_mems(
// CHECK-SAME:    %[[H:[^:]+]]: tensor<2x16x32xf32>, %[[G:[^:]+]]: tensor<2x5x32xf32>, %[[MEMS:[^:]+]]: tensor<8x2x32xf32>, %[[POS:[^:]+]]: tensor<1x40x32xf32>, %[[SEG:[^:]+]]: tensor<2x16x24xi1>, %[[MASK_H:[^:]+]]: tensor<2x16x24xi1>, %[[MASK_G:[^:]+]]: tensor<2x16x24xi1>, %[[ROWS:[^:]+]]: tensor<2x5xi64>,
// CHECK-SAME:    %[[W_Q:[^:]+]]: tensor<32x2x16xf32>, %[[W_K:[^:]+]]: tensor<32x2x16xf32>, %[[W_V:[^:]+]]: tensor<32x2x16xf32>, %[[W_O:[^:]+]]: tensor<32x2x16xf32>, %[[W_R:[^:]+]]: tensor<32x2x16xf32>, %[[R_W:[^:]+]]: tensor<2x16xf32>, %[[R_R:[^:]+]]: tensor<2x16xf32>, %[[R_S:[^:]+]]: tensor<2x16xf32>, %[[SEG_EMBED:[^:]+]]: tensor<2x2x16xf32>,
// CHECK-SAME:    %[[ALN_W:[^:]+]]: tensor<32xf32>, %[[ALN_B:[^:]+]]: tensor<32xf32>, %[[W1:[^:]+]]: tensor<48x32xf32>, %[[B1:[^:]+]]: tensor<48xf32>, %[[W2:[^:]+]]: tensor<32x48xf32>, %[[B2:[^:]+]]: tensor<32xf32>, %[[FLN_W:[^:]+]]: tensor<32xf32>, %[[FLN_B:[^:]+]]: tensor<32xf32>)
// CHECK:         %[[H_OUT:.+]], %[[G_OUT:.+]], %[[NEW_MEMS:.+]] = xlnet.two_stream_layer h(%[[H]]) g(%[[G]]) mems(%[[MEMS]]) pos(%[[POS]]) seg(%[[SEG]]) masks(%[[MASK_H]], %[[MASK_G]]) rows(%[[ROWS]])
// CHECK-SAME:      attn(%[[W_Q]], %[[W_K]], %[[W_V]], %[[W_O]], %[[W_R]]) biases(%[[R_W]], %[[R_R]], %[[R_S]]) seg_embed(%[[SEG_EMBED]]) attn_ln(%[[ALN_W]], %[[ALN_B]]) ffn(%[[W1]], %[[B1]], %[[W2]], %[[B2]]) ffn_ln(%[[FLN_W]], %[[FLN_B]])
// CHECK-SAME:      {activation = #xlnet<activation relu>, dropatt = 0.000000e+00 : f64, dropout = 1.000000e-01 : f64, eps = 9.9999999999999998E-13 : f64, mem_len = 8 : i64, reuse_len = 8 : i64}
// CHECK-SAME:      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
// CHECK-SAME:      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
// CHECK:         return %[[H_OUT]], %[[G_OUT]], %[[NEW_MEMS]]
func.func @two_stream_layer_with_mems(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>,
    %pos: tensor<1x40x32xf32>, %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>,
    %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>,
    %wo: tensor<32x2x16xf32>, %wr: tensor<32x2x16xf32>,
    %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>,
    %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %fw: tensor<32xf32>, %fb: tensor<32xf32>)
    -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>) {
  %h1, %g1, %m1 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.1 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>,
         tensor<1x40x32xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>,
         tensor<2x16x24xi1>, tensor<2x5xi64>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>,
         tensor<32xf32>, tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return %h1, %g1, %m1 : tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>
}

// A layer without memory (mem_len = 0): no mems operand, no new_mems result,
// K = S = 16 and R = K + S = 32; bi_data positional encoding (P = 2).
// CHECK-LABEL: func.func @two_stream_layer_without_mems(
// CHECK-SAME:    %[[H:[^:]+]]: tensor<2x16x32xf32>, %[[G:[^:]+]]: tensor<2x5x32xf32>, %[[POS:[^:]+]]: tensor<2x32x32xf32>, %[[SEG:[^:]+]]: tensor<2x16x16xi1>, %[[MASK_H:[^:]+]]: tensor<2x16x16xi1>, %[[MASK_G:[^:]+]]: tensor<2x16x16xi1>, %[[ROWS:[^:]+]]: tensor<2x5xi64>,
// CHECK-SAME:    %[[W_Q:[^:]+]]: tensor<32x2x16xf32>, %[[W_K:[^:]+]]: tensor<32x2x16xf32>, %[[W_V:[^:]+]]: tensor<32x2x16xf32>, %[[W_O:[^:]+]]: tensor<32x2x16xf32>, %[[W_R:[^:]+]]: tensor<32x2x16xf32>, %[[R_W:[^:]+]]: tensor<2x16xf32>, %[[R_R:[^:]+]]: tensor<2x16xf32>, %[[R_S:[^:]+]]: tensor<2x16xf32>, %[[SEG_EMBED:[^:]+]]: tensor<2x2x16xf32>,
// CHECK-SAME:    %[[ALN_W:[^:]+]]: tensor<32xf32>, %[[ALN_B:[^:]+]]: tensor<32xf32>, %[[W1:[^:]+]]: tensor<48x32xf32>, %[[B1:[^:]+]]: tensor<48xf32>, %[[W2:[^:]+]]: tensor<32x48xf32>, %[[B2:[^:]+]]: tensor<32xf32>, %[[FLN_W:[^:]+]]: tensor<32xf32>, %[[FLN_B:[^:]+]]: tensor<32xf32>)
// CHECK:         %[[H_OUT:.+]], %[[G_OUT:.+]] = xlnet.two_stream_layer h(%[[H]]) g(%[[G]]) pos(%[[POS]]) seg(%[[SEG]]) masks(%[[MASK_H]], %[[MASK_G]]) rows(%[[ROWS]])
// CHECK-SAME:      attn(%[[W_Q]], %[[W_K]], %[[W_V]], %[[W_O]], %[[W_R]]) biases(%[[R_W]], %[[R_R]], %[[R_S]]) seg_embed(%[[SEG_EMBED]]) attn_ln(%[[ALN_W]], %[[ALN_B]]) ffn(%[[W1]], %[[B1]], %[[W2]], %[[B2]]) ffn_ln(%[[FLN_W]], %[[FLN_B]])
// CHECK-SAME:      {activation = #xlnet<activation gelu_tanh>, dropatt = 1.000000e-01 : f64, dropout = 0.000000e+00 : f64, eps = 9.9999999999999998E-13 : f64, mem_len = 0 : i64, reuse_len = 0 : i64}
// CHECK-SAME:      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<2x32x32xf32>, tensor<2x16x16xi1>, tensor<2x16x16xi1>, tensor<2x16x16xi1>, tensor<2x5xi64>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
// CHECK-SAME:      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>)
// CHECK:         return %[[H_OUT]], %[[G_OUT]]
func.func @two_stream_layer_without_mems(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>,
    %pos: tensor<2x32x32xf32>, %seg: tensor<2x16x16xi1>, %mask_h: tensor<2x16x16xi1>,
    %mask_g: tensor<2x16x16xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>,
    %wo: tensor<32x2x16xf32>, %wr: tensor<32x2x16xf32>,
    %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>,
    %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %fw: tensor<32xf32>, %fb: tensor<32xf32>)
    -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>) {
  %h1, %g1 = xlnet.two_stream_layer h(%h) g(%g) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation gelu_tanh>, dropatt = 0.1 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 0 : i64,
       reuse_len = 0 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>,
         tensor<2x32x32xf32>, tensor<2x16x16xi1>, tensor<2x16x16xi1>,
         tensor<2x16x16xi1>, tensor<2x5xi64>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>,
         tensor<32xf32>, tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>)
  return %h1, %g1 : tensor<2x16x32xf32>, tensor<2x5x32xf32>
}

//===----------------------------------------------------------------------===//
// Kernel level
//===----------------------------------------------------------------------===//

// Plain gemm, the head_proj of the kernel level: x [2, 24, 32] · w [32, 2, 16]
// (K dims first) -> [2, 24, 2, 16]. The defaults (k_rank = 1, no transpose_w,
// activation none) are not printed.
// CHECK-LABEL: func.func @gemm_plain(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x24x32xf32>, %[[W:[^:]+]]: tensor<32x2x16xf32>)
// CHECK:         %[[Y:.+]] = xlnet.gemm %[[X]], %[[W]] : (tensor<2x24x32xf32>, tensor<32x2x16xf32>) -> tensor<2x24x2x16xf32>
// CHECK:         return %[[Y]]
func.func @gemm_plain(%x: tensor<2x24x32xf32>, %w: tensor<32x2x16xf32>) -> tensor<2x24x2x16xf32> {
  %0 = xlnet.gemm %x, %w : (tensor<2x24x32xf32>, tensor<32x2x16xf32>) -> tensor<2x24x2x16xf32>
  return %0 : tensor<2x24x2x16xf32>
}

// Explicitly spelled default attributes are dropped by the printer.
// CHECK-LABEL: func.func @gemm_explicit_defaults(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x24x32xf32>, %[[W:[^:]+]]: tensor<32x2x16xf32>)
// CHECK:         %[[Y:.+]] = xlnet.gemm %[[X]], %[[W]] : (tensor<2x24x32xf32>, tensor<32x2x16xf32>) -> tensor<2x24x2x16xf32>
// CHECK:         return %[[Y]]
func.func @gemm_explicit_defaults(%x: tensor<2x24x32xf32>, %w: tensor<32x2x16xf32>) -> tensor<2x24x2x16xf32> {
  %0 = xlnet.gemm %x, %w {k_rank = 1 : i64, activation = #xlnet<activation none>}
      : (tensor<2x24x32xf32>, tensor<32x2x16xf32>) -> tensor<2x24x2x16xf32>
  return %0 : tensor<2x24x2x16xf32>
}

// FFN layer 1 at the kernel level: bias, relu epilogue and a transposed
// weight [N, K] = [48, 32].
// CHECK-LABEL: func.func @gemm_bias_activation_transpose_w(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x32xf32>, %[[W1:[^:]+]]: tensor<48x32xf32>, %[[B1:[^:]+]]: tensor<48xf32>)
// CHECK:         %[[Y:.+]] = xlnet.gemm %[[X]], %[[W1]] bias %[[B1]] {activation = #xlnet<activation relu>, transpose_w} : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>) -> tensor<2x16x48xf32>
// CHECK:         return %[[Y]]
func.func @gemm_bias_activation_transpose_w(%x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>,
                                            %b1: tensor<48xf32>) -> tensor<2x16x48xf32> {
  %0 = xlnet.gemm %x, %w1 bias %b1 {activation = #xlnet<activation relu>, transpose_w}
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>) -> tensor<2x16x48xf32>
  return %0 : tensor<2x16x48xf32>
}

// Bias with a gelu epilogue, weight not transposed ([K, N] = [32, 48]).
// CHECK-LABEL: func.func @gemm_bias_gelu(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x32xf32>, %[[W:[^:]+]]: tensor<32x48xf32>, %[[B:[^:]+]]: tensor<48xf32>)
// CHECK:         %[[Y:.+]] = xlnet.gemm %[[X]], %[[W]] bias %[[B]] {activation = #xlnet<activation gelu_erf>} : (tensor<2x16x32xf32>, tensor<32x48xf32>, tensor<48xf32>) -> tensor<2x16x48xf32>
// CHECK:         return %[[Y]]
func.func @gemm_bias_gelu(%x: tensor<2x16x32xf32>, %w: tensor<32x48xf32>,
                          %b: tensor<48xf32>) -> tensor<2x16x48xf32> {
  %0 = xlnet.gemm %x, %w bias %b {activation = #xlnet<activation gelu_erf>}
      : (tensor<2x16x32xf32>, tensor<32x48xf32>, tensor<48xf32>) -> tensor<2x16x48xf32>
  return %0 : tensor<2x16x48xf32>
}

// The o-projection at the kernel level: contracts the last two dims of attn
// [B, T, N, H] (k_rank = 2) with W_o [D, N, H] (transpose_w: K dims last).
// CHECK-LABEL: func.func @gemm_k_rank_2(
// CHECK-SAME:    %[[ATTN:[^:]+]]: tensor<2x16x2x16xf32>, %[[W_O:[^:]+]]: tensor<32x2x16xf32>)
// CHECK:         %[[Y:.+]] = xlnet.gemm %[[ATTN]], %[[W_O]] {k_rank = 2 : i64, transpose_w} : (tensor<2x16x2x16xf32>, tensor<32x2x16xf32>) -> tensor<2x16x32xf32>
// CHECK:         return %[[Y]]
func.func @gemm_k_rank_2(%attn: tensor<2x16x2x16xf32>, %w_o: tensor<32x2x16xf32>) -> tensor<2x16x32xf32> {
  %0 = xlnet.gemm %attn, %w_o {k_rank = 2 : i64, transpose_w}
      : (tensor<2x16x2x16xf32>, tensor<32x2x16xf32>) -> tensor<2x16x32xf32>
  return %0 : tensor<2x16x32xf32>
}

// LayerNorm(x + residual) over the last dim, gamma and beta [D].
// CHECK-LABEL: func.func @add_layer_norm(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x32xf32>, %[[RES:[^:]+]]: tensor<2x16x32xf32>, %[[GAMMA:[^:]+]]: tensor<32xf32>, %[[BETA:[^:]+]]: tensor<32xf32>)
// CHECK:         %[[Y:.+]] = xlnet.add_layer_norm %[[X]], %[[RES]], %[[GAMMA]], %[[BETA]] eps = 9.9999999999999998E-13 : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
// CHECK:         return %[[Y]]
func.func @add_layer_norm(%x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>,
                          %gamma: tensor<32xf32>, %beta: tensor<32xf32>) -> tensor<2x16x32xf32> {
  %0 = xlnet.add_layer_norm %x, %res, %gamma, %beta eps = 1.0e-12
      : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
      -> tensor<2x16x32xf32>
  return %0 : tensor<2x16x32xf32>
}

// Inverted dropout: one type for operand and result; rate = 0 is allowed.
// CHECK-LABEL: func.func @dropout(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x32xf32>)
// CHECK:         %[[Y:.+]] = xlnet.dropout %[[X]] rate = 1.000000e-01 : tensor<2x16x32xf32>
// CHECK:         %[[Z:.+]] = xlnet.dropout %[[Y]] rate = 0.000000e+00 : tensor<2x16x32xf32>
// CHECK:         return %[[Z]]
func.func @dropout(%x: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %0 = xlnet.dropout %x rate = 0.1 : tensor<2x16x32xf32>
  %1 = xlnet.dropout %0 rate = 0.0 : tensor<2x16x32xf32>
  return %1 : tensor<2x16x32xf32>
}

// The optional `site` fixes the dropout random stream; it is printed in the
// attribute dictionary. Site 0 is valid.
// CHECK-LABEL: func.func @dropout_site(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x32xf32>)
// CHECK:         %[[Y:.+]] = xlnet.dropout %[[X]] rate = 1.000000e-01 {site = 0 : i64} : tensor<2x16x32xf32>
// CHECK:         %[[Z:.+]] = xlnet.dropout %[[Y]] rate = 1.000000e-01 {site = 12 : i64} : tensor<2x16x32xf32>
// CHECK:         return %[[Z]]
func.func @dropout_site(%x: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %0 = xlnet.dropout %x rate = 0.1 {site = 0 : i64} : tensor<2x16x32xf32>
  %1 = xlnet.dropout %0 rate = 0.1 {site = 12 : i64} : tensor<2x16x32xf32>
  return %1 : tensor<2x16x32xf32>
}

// `batch_shared`: x has no batch dimension (the relative positions, one
// copy or two with bi_data): one mask for every batch row.
// CHECK-LABEL: func.func @dropout_batch_shared(
// CHECK:         xlnet.dropout %{{.+}} rate = 1.000000e-01 {batch_shared, site = 2 : i64} : tensor<2x48x32xf32>
func.func @dropout_batch_shared(%pos: tensor<2x48x32xf32>) -> tensor<2x48x32xf32> {
  %0 = xlnet.dropout %pos rate = 0.1 {batch_shared, site = 2 : i64} : tensor<2x48x32xf32>
  return %0 : tensor<2x48x32xf32>
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

// Scatter-add of dout [B, S, D] by ids [B, S] into the table gradient [V, D].
// CHECK-LABEL: func.func @embedding_grad(
// CHECK-SAME:    %[[IDS:[^:]+]]: tensor<2x16xi64>, %[[DOUT:[^:]+]]: tensor<2x16x32xf32>)
// CHECK:         %[[DE:.+]] = xlnet.embedding_grad %[[IDS]], %[[DOUT]] : (tensor<2x16xi64>, tensor<2x16x32xf32>) -> tensor<64x32xf32>
// CHECK:         return %[[DE]]
func.func @embedding_grad(%ids: tensor<2x16xi64>, %dout: tensor<2x16x32xf32>) -> tensor<64x32xf32> {
  %0 = xlnet.embedding_grad %ids, %dout : (tensor<2x16xi64>, tensor<2x16x32xf32>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// The gradient of mask_emb: dout [B, NP, D] summed to [1, 1, D].
// CHECK-LABEL: func.func @mask_embedding_grad(
// CHECK-SAME:    %[[DG0:[^:]+]]: tensor<2x5x32xf32>)
// CHECK:         %[[DM:.+]] = xlnet.mask_embedding_grad %[[DG0]] : (tensor<2x5x32xf32>) -> tensor<1x1x32xf32>
// CHECK:         return %[[DM]]
func.func @mask_embedding_grad(%dg0: tensor<2x5x32xf32>) -> tensor<1x1x32xf32> {
  %0 = xlnet.mask_embedding_grad %dg0 : (tensor<2x5x32xf32>) -> tensor<1x1x32xf32>
  return %0 : tensor<1x1x32xf32>
}

// The gradient of h from [mems ; h]: the last S = 16 of the K = 24 key rows.
// CHECK-LABEL: func.func @mem_concat_grad(
// CHECK-SAME:    %[[DCAT:[^:]+]]: tensor<2x24x32xf32>)
// CHECK:         %[[DH:.+]] = xlnet.mem_concat_grad %[[DCAT]] : (tensor<2x24x32xf32>) -> tensor<2x16x32xf32>
// CHECK:         return %[[DH]]
func.func @mem_concat_grad(%dcat: tensor<2x24x32xf32>) -> tensor<2x16x32xf32> {
  %0 = xlnet.mem_concat_grad %dcat : (tensor<2x24x32xf32>) -> tensor<2x16x32xf32>
  return %0 : tensor<2x16x32xf32>
}

// Without memory (K = S) the gradient is dout itself, still a valid op.
// CHECK-LABEL: func.func @mem_concat_grad_no_mems(
// CHECK-SAME:    %[[DCAT:[^:]+]]: tensor<2x16x32xf32>)
// CHECK:         %[[DH:.+]] = xlnet.mem_concat_grad %[[DCAT]] : (tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
// CHECK:         return %[[DH]]
func.func @mem_concat_grad_no_mems(%dcat: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %0 = xlnet.mem_concat_grad %dcat : (tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  return %0 : tensor<2x16x32xf32>
}

// Elementwise activation, one type for operand and result; the activation
// prints as its bare keyword before the operand (none is accepted here).
// CHECK-LABEL: func.func @activation(
// CHECK-SAME:    %[[Z:[^:]+]]: tensor<2x16x48xf32>)
// CHECK:         %[[A:.+]] = xlnet.activation relu %[[Z]] : tensor<2x16x48xf32>
// CHECK:         %[[B:.+]] = xlnet.activation gelu_tanh %[[A]] : tensor<2x16x48xf32>
// CHECK:         %[[C:.+]] = xlnet.activation gelu_erf %[[B]] : tensor<2x16x48xf32>
// CHECK:         %[[D:.+]] = xlnet.activation none %[[C]] : tensor<2x16x48xf32>
// CHECK:         return %[[D]]
func.func @activation(%z: tensor<2x16x48xf32>) -> tensor<2x16x48xf32> {
  %0 = xlnet.activation relu %z : tensor<2x16x48xf32>
  %1 = xlnet.activation gelu_tanh %0 : tensor<2x16x48xf32>
  %2 = xlnet.activation gelu_erf %1 : tensor<2x16x48xf32>
  %3 = xlnet.activation none %2 : tensor<2x16x48xf32>
  return %3 : tensor<2x16x48xf32>
}

// dy · act'(x) for the pre-activation x: dy, x and the result share one type.
// CHECK-LABEL: func.func @activation_grad(
// CHECK-SAME:    %[[DY:[^:]+]]: tensor<2x16x48xf32>, %[[Z:[^:]+]]: tensor<2x16x48xf32>)
// CHECK:         %[[A:.+]] = xlnet.activation_grad relu %[[DY]], %[[Z]] : tensor<2x16x48xf32>
// CHECK:         %[[B:.+]] = xlnet.activation_grad gelu_tanh %[[A]], %[[Z]] : tensor<2x16x48xf32>
// CHECK:         %[[C:.+]] = xlnet.activation_grad gelu_erf %[[B]], %[[Z]] : tensor<2x16x48xf32>
// CHECK:         return %[[C]]
func.func @activation_grad(%dy: tensor<2x16x48xf32>, %z: tensor<2x16x48xf32>) -> tensor<2x16x48xf32> {
  %0 = xlnet.activation_grad relu %dy, %z : tensor<2x16x48xf32>
  %1 = xlnet.activation_grad gelu_tanh %0, %z : tensor<2x16x48xf32>
  %2 = xlnet.activation_grad gelu_erf %1, %z : tensor<2x16x48xf32>
  return %2 : tensor<2x16x48xf32>
}

// Weight gradient of FFN layer 1 (w1 [N, K] = [48, 32], transpose_w):
// dyᵀ · x laid out like w1. Default k_rank = 1 is not printed.
// CHECK-LABEL: func.func @gemm_wgrad_transpose_w(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x16x32xf32>, %[[DZ:[^:]+]]: tensor<2x16x48xf32>)
// CHECK:         %[[DW:.+]] = xlnet.gemm_wgrad %[[X]], %[[DZ]] {transpose_w} : (tensor<2x16x32xf32>, tensor<2x16x48xf32>) -> tensor<48x32xf32>
// CHECK:         return %[[DW]]
func.func @gemm_wgrad_transpose_w(%x: tensor<2x16x32xf32>, %dz: tensor<2x16x48xf32>) -> tensor<48x32xf32> {
  %0 = xlnet.gemm_wgrad %x, %dz {transpose_w, k_rank = 1 : i64}
      : (tensor<2x16x32xf32>, tensor<2x16x48xf32>) -> tensor<48x32xf32>
  return %0 : tensor<48x32xf32>
}

// Weight gradient of a head projection (w [K, N...] = [32, 2, 16]): xᵀ · dy.
// CHECK-LABEL: func.func @gemm_wgrad_plain(
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x24x32xf32>, %[[DY:[^:]+]]: tensor<2x24x2x16xf32>)
// CHECK:         %[[DW:.+]] = xlnet.gemm_wgrad %[[X]], %[[DY]] : (tensor<2x24x32xf32>, tensor<2x24x2x16xf32>) -> tensor<32x2x16xf32>
// CHECK:         return %[[DW]]
func.func @gemm_wgrad_plain(%x: tensor<2x24x32xf32>, %dy: tensor<2x24x2x16xf32>) -> tensor<32x2x16xf32> {
  %0 = xlnet.gemm_wgrad %x, %dy : (tensor<2x24x32xf32>, tensor<2x24x2x16xf32>) -> tensor<32x2x16xf32>
  return %0 : tensor<32x2x16xf32>
}

// Weight gradient of the o-projection: x = attn [B, T, N, H] contracted over
// its last two dims (k_rank = 2), W_o [D, N, H] (transpose_w: K dims last).
// CHECK-LABEL: func.func @gemm_wgrad_k_rank_2(
// CHECK-SAME:    %[[ATTN:[^:]+]]: tensor<2x16x2x16xf32>, %[[DY:[^:]+]]: tensor<2x16x32xf32>)
// CHECK:         %[[DW:.+]] = xlnet.gemm_wgrad %[[ATTN]], %[[DY]] {k_rank = 2 : i64, transpose_w} : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>) -> tensor<32x2x16xf32>
// CHECK:         return %[[DW]]
func.func @gemm_wgrad_k_rank_2(%attn: tensor<2x16x2x16xf32>, %dy: tensor<2x16x32xf32>) -> tensor<32x2x16xf32> {
  %0 = xlnet.gemm_wgrad %attn, %dy {k_rank = 2 : i64, transpose_w}
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>) -> tensor<32x2x16xf32>
  return %0 : tensor<32x2x16xf32>
}

// Bias gradient: dy summed over its leading dims. N may span several
// trailing dims of dy (N = 2 * 16 = 32 for a [B, K, N, H] output).
// CHECK-LABEL: func.func @bias_grad(
// CHECK-SAME:    %[[DZ:[^:]+]]: tensor<2x16x48xf32>, %[[DY:[^:]+]]: tensor<2x24x2x16xf32>)
// CHECK:         %[[DB1:.+]] = xlnet.bias_grad %[[DZ]] : (tensor<2x16x48xf32>) -> tensor<48xf32>
// CHECK:         %[[DB2:.+]] = xlnet.bias_grad %[[DY]] : (tensor<2x24x2x16xf32>) -> tensor<32xf32>
// CHECK:         return %[[DB1]], %[[DB2]]
func.func @bias_grad(%dz: tensor<2x16x48xf32>, %dy: tensor<2x24x2x16xf32>)
    -> (tensor<48xf32>, tensor<32xf32>) {
  %0 = xlnet.bias_grad %dz : (tensor<2x16x48xf32>) -> tensor<48xf32>
  %1 = xlnet.bias_grad %dy : (tensor<2x24x2x16xf32>) -> tensor<32xf32>
  return %0, %1 : tensor<48xf32>, tensor<32xf32>
}

// Gradient of the query-stream rel_attention (rows, bi_data k_r, dropatt
// with the forward's site): eight results, each of its operand's type.
// CHECK-LABEL: func.func @rel_attention_grad_query_rows(
// CHECK-SAME:    %[[DOUT:[^:]+]]: tensor<2x5x2x16xf32>, %[[Q:[^:]+]]: tensor<2x5x2x16xf32>, %[[K:[^:]+]]: tensor<2x24x2x16xf32>, %[[V:[^:]+]]: tensor<2x24x2x16xf32>, %[[K_R:[^:]+]]: tensor<2x40x2x16xf32>, %[[SEG_EMBED:[^:]+]]: tensor<2x2x16xf32>, %[[R_W:[^:]+]]: tensor<2x16xf32>, %[[R_R:[^:]+]]: tensor<2x16xf32>, %[[R_S:[^:]+]]: tensor<2x16xf32>, %[[SEG:[^:]+]]: tensor<2x16x24xi1>, %[[MASK_G:[^:]+]]: tensor<2x16x24xi1>, %[[ROWS:[^:]+]]: tensor<2x5xi64>)
// CHECK:         %[[DQ:[^,]+]], %[[DK:[^,]+]], %[[DV:[^,]+]], %[[DKR:[^,]+]], %[[DSE:[^,]+]], %[[DRW:[^,]+]], %[[DRR:[^,]+]], %[[DRS:[^ ]+]] = xlnet.rel_attention_grad dout(%[[DOUT]]) q(%[[Q]]) k(%[[K]]) v(%[[V]]) k_r(%[[K_R]]) seg_embed(%[[SEG_EMBED]]) biases(%[[R_W]], %[[R_R]], %[[R_S]]) seg_mat(%[[SEG]]) mask(%[[MASK_G]]) rows(%[[ROWS]]) scale = 2.500000e-01 dropatt = 1.000000e-01 {site = 3 : i64}
// CHECK-SAME:      : (tensor<2x5x2x16xf32>, tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>)
// CHECK-SAME:      -> (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
// CHECK:         return %[[DQ]], %[[DK]], %[[DV]], %[[DKR]], %[[DSE]], %[[DRW]], %[[DRR]], %[[DRS]]
func.func @rel_attention_grad_query_rows(
    %dout: tensor<2x5x2x16xf32>, %q: tensor<2x5x2x16xf32>, %k: tensor<2x24x2x16xf32>,
    %v: tensor<2x24x2x16xf32>, %kr: tensor<2x40x2x16xf32>, %se: tensor<2x2x16xf32>,
    %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>)
    -> (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
        tensor<2x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>,
        tensor<2x16xf32>, tensor<2x16xf32>) {
  %dq, %dk, %dv, %dkr, %dse, %drw, %drr, %drs = xlnet.rel_attention_grad
      dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rr, %rs)
      seg_mat(%seg) mask(%mask) rows(%rows) scale = 0.25 dropatt = 0.1 {site = 3 : i64}
      : (tensor<2x5x2x16xf32>, tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<2x24x2x16xf32>, tensor<2x40x2x16xf32>, tensor<2x2x16xf32>,
         tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16x24xi1>,
         tensor<2x16x24xi1>, tensor<2x5xi64>)
      -> (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
          tensor<2x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>,
          tensor<2x16xf32>, tensor<2x16xf32>)
  return %dq, %dk, %dv, %dkr, %dse, %drw, %drr, %drs
      : tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
        tensor<2x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>,
        tensor<2x16xf32>, tensor<2x16xf32>
}

// Gradient of the content-stream rel_attention: no rows (T = S), no site,
// single positional copy.
// CHECK-LABEL: func.func @rel_attention_grad_content(
// CHECK-SAME:    %[[DOUT:[^:]+]]: tensor<2x16x2x16xf32>, %[[Q:[^:]+]]: tensor<2x16x2x16xf32>, %[[K:[^:]+]]: tensor<2x24x2x16xf32>, %[[V:[^:]+]]: tensor<2x24x2x16xf32>, %[[K_R:[^:]+]]: tensor<1x40x2x16xf32>, %[[SEG_EMBED:[^:]+]]: tensor<2x2x16xf32>, %[[R_W:[^:]+]]: tensor<2x16xf32>, %[[R_R:[^:]+]]: tensor<2x16xf32>, %[[R_S:[^:]+]]: tensor<2x16xf32>, %[[SEG:[^:]+]]: tensor<2x16x24xi1>, %[[MASK_H:[^:]+]]: tensor<2x16x24xi1>)
// CHECK:         %[[DQ:[^,]+]], {{.+}} = xlnet.rel_attention_grad dout(%[[DOUT]]) q(%[[Q]]) k(%[[K]]) v(%[[V]]) k_r(%[[K_R]]) seg_embed(%[[SEG_EMBED]]) biases(%[[R_W]], %[[R_R]], %[[R_S]]) seg_mat(%[[SEG]]) mask(%[[MASK_H]]) scale = 2.500000e-01 dropatt = 0.000000e+00 : (tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
// CHECK-SAME:      -> (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
// CHECK:         return %[[DQ]]
func.func @rel_attention_grad_content(
    %dout: tensor<2x16x2x16xf32>, %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>,
    %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>,
    %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) -> tensor<2x16x2x16xf32> {
  %0:8 = xlnet.rel_attention_grad
      dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rr, %rs)
      seg_mat(%seg) mask(%mask) scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>, tensor<2x2x16xf32>,
         tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16x24xi1>,
         tensor<2x16x24xi1>)
      -> (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
          tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>,
          tensor<2x16xf32>, tensor<2x16xf32>)
  return %0#0 : tensor<2x16x2x16xf32>
}

// Gradient of add_layer_norm: d(x + residual) of x's type, dgamma and dbeta [D].
// CHECK-LABEL: func.func @add_layer_norm_grad(
// CHECK-SAME:    %[[DY:[^:]+]]: tensor<2x16x32xf32>, %[[X:[^:]+]]: tensor<2x16x32xf32>, %[[RES:[^:]+]]: tensor<2x16x32xf32>, %[[GAMMA:[^:]+]]: tensor<32xf32>)
// CHECK:         %[[DSUM:[^,]+]], %[[DGAMMA:[^,]+]], %[[DBETA:[^ ]+]] = xlnet.add_layer_norm_grad %[[DY]], %[[X]], %[[RES]], %[[GAMMA]] eps = 9.9999999999999998E-13 : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>) -> (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
// CHECK:         return %[[DSUM]], %[[DGAMMA]], %[[DBETA]]
func.func @add_layer_norm_grad(%dy: tensor<2x16x32xf32>, %x: tensor<2x16x32xf32>,
                               %res: tensor<2x16x32xf32>, %gamma: tensor<32xf32>)
    -> (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) {
  %dsum, %dgamma, %dbeta = xlnet.add_layer_norm_grad %dy, %x, %res, %gamma eps = 1.0e-12
      : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
  return %dsum, %dgamma, %dbeta : tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>
}

// Gradient of the loss with respect to the logits: no incoming gradient.
// CHECK-LABEL: func.func @lm_loss_grad(
// CHECK-SAME:    %[[LOGITS:[^:]+]]: tensor<2x5x64xf32>, %[[TARGET:[^:]+]]: tensor<2x5xi64>, %[[TARGET_MASK:[^:]+]]: tensor<2x5xf32>)
// CHECK:         %[[DLOGITS:.+]] = xlnet.lm_loss_grad %[[LOGITS]], %[[TARGET]], %[[TARGET_MASK]] : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<2x5x64xf32>
// CHECK:         return %[[DLOGITS]]
func.func @lm_loss_grad(%logits: tensor<2x5x64xf32>, %target: tensor<2x5xi64>,
                        %target_mask: tensor<2x5xf32>) -> tensor<2x5x64xf32> {
  %0 = xlnet.lm_loss_grad %logits, %target, %target_mask
      : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// With the count that divides it (a micro-batch of gradient accumulation).
// CHECK-LABEL: func.func @lm_loss_grad_count(
// CHECK:         xlnet.lm_loss_grad %{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %{{[^ ]+}} : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>, tensor<f32>) -> tensor<2x5x64xf32>
func.func @lm_loss_grad_count(%logits: tensor<2x5x64xf32>, %target: tensor<2x5xi64>,
                              %target_mask: tensor<2x5xf32>, %count: tensor<f32>) -> tensor<2x5x64xf32> {
  %0 = xlnet.lm_loss_grad %logits, %target, %target_mask, %count
      : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>, tensor<f32>) -> tensor<2x5x64xf32>
  return %0 : tensor<2x5x64xf32>
}

// Gradient accumulation: one type for both operands and the result.
// CHECK-LABEL: func.func @add(
// CHECK-SAME:    %[[A:[^:]+]]: tensor<2x16x32xf32>, %[[B:[^:]+]]: tensor<2x16x32xf32>)
// CHECK:         %[[SUM:.+]] = xlnet.add %[[A]], %[[B]] : tensor<2x16x32xf32>
// CHECK:         return %[[SUM]]
func.func @add(%a: tensor<2x16x32xf32>, %b: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %0 = xlnet.add %a, %b : tensor<2x16x32xf32>
  return %0 : tensor<2x16x32xf32>
}

//===----------------------------------------------------------------------===//
// Optimizer
//===----------------------------------------------------------------------===//

// Learning-rate schedule: a scalar i64 step gives a scalar f32 rate; the decay
// prints as its bare keyword.
// CHECK-LABEL: func.func @lr_schedule(
// CHECK-SAME:    %[[STEP:[^:]+]]: tensor<i64>)
// CHECK:         %[[POLY:.+]] = xlnet.lr_schedule %[[STEP]] decay = poly learning_rate = 1.000000e-04 warmup_steps = 10 train_steps = 100 min_lr_ratio = 0.000000e+00 : (tensor<i64>) -> tensor<f32>
// CHECK:         %[[COS:.+]] = xlnet.lr_schedule %[[STEP]] decay = cos learning_rate = 4.000000e-04 warmup_steps = 0 train_steps = 1 min_lr_ratio = 1.000000e+00 : (tensor<i64>) -> tensor<f32>
// CHECK:         return %[[POLY]], %[[COS]]
func.func @lr_schedule(%step: tensor<i64>) -> (tensor<f32>, tensor<f32>) {
  %0 = xlnet.lr_schedule %step decay = poly learning_rate = 1.0e-4
      warmup_steps = 10 train_steps = 100 min_lr_ratio = 0.0
      : (tensor<i64>) -> tensor<f32>
  %1 = xlnet.lr_schedule %step decay = cos learning_rate = 4.0e-4
      warmup_steps = 0 train_steps = 1 min_lr_ratio = 1.0
      : (tensor<i64>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}

// Global L2 norm of any number (>= 1) of tensors of any shapes.
// CHECK-LABEL: func.func @global_norm(
// CHECK-SAME:    %[[G0:[^:]+]]: tensor<64x32xf32>, %[[G1:[^:]+]]: tensor<32xf32>, %[[G2:[^:]+]]: tensor<f32>)
// CHECK:         %[[N3:.+]] = xlnet.global_norm %[[G0]], %[[G1]], %[[G2]] : (tensor<64x32xf32>, tensor<32xf32>, tensor<f32>) -> tensor<f32>
// CHECK:         %[[N1:.+]] = xlnet.global_norm %[[G1]] : (tensor<32xf32>) -> tensor<f32>
// CHECK:         return %[[N3]], %[[N1]]
func.func @global_norm(%g0: tensor<64x32xf32>, %g1: tensor<32xf32>, %g2: tensor<f32>)
    -> (tensor<f32>, tensor<f32>) {
  %0 = xlnet.global_norm %g0, %g1, %g2 : (tensor<64x32xf32>, tensor<32xf32>, tensor<f32>) -> tensor<f32>
  %1 = xlnet.global_norm %g1 : (tensor<32xf32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}

// Adam with bias correction (tf.train.AdamOptimizer, weight_decay 0): the
// unit attribute prints in the attribute dictionary.
// CHECK-LABEL: func.func @adam_update_bias_correction(
// CHECK-SAME:    %[[P:[^:]+]]: tensor<32xf32>, %[[G:[^:]+]]: tensor<32xf32>, %[[M:[^:]+]]: tensor<32xf32>, %[[V:[^:]+]]: tensor<32xf32>, %[[LR:[^:]+]]: tensor<f32>, %[[N:[^:]+]]: tensor<f32>, %[[STEP:[^:]+]]: tensor<i64>)
// CHECK:         %[[P1:[^,]+]], %[[M1:[^,]+]], %[[V1:[^ ]+]] = xlnet.adam_update %[[P]], %[[G]], %[[M]], %[[V]] lr(%[[LR]]) grad_norm(%[[N]]) step(%[[STEP]]) beta1 = 9.000000e-01 beta2 = 0.99899999999999999 epsilon = 9.9999999999999995E-7 clip = 1.000000e+00 weight_decay = 0.000000e+00 {bias_correction} : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>, tensor<i64>) -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
// CHECK:         return %[[P1]], %[[M1]], %[[V1]]
func.func @adam_update_bias_correction(
    %p: tensor<32xf32>, %g: tensor<32xf32>, %m: tensor<32xf32>, %v: tensor<32xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>)
    -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) {
  %p1, %m1, %v1 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 0.9 beta2 = 0.999 epsilon = 1.0e-6 clip = 1.0 weight_decay = 0.0
      {bias_correction}
      : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  return %p1, %m1, %v1 : tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
}

// AdamWeightDecay (no bias_correction) with weight decay; clip <= 0 disables
// clipping and is accepted.
// CHECK-LABEL: func.func @adam_update_weight_decay(
// CHECK-SAME:    %[[P:[^:]+]]: tensor<64x32xf32>, %[[G:[^:]+]]: tensor<64x32xf32>, %[[M:[^:]+]]: tensor<64x32xf32>, %[[V:[^:]+]]: tensor<64x32xf32>, %[[LR:[^:]+]]: tensor<f32>, %[[N:[^:]+]]: tensor<f32>, %[[STEP:[^:]+]]: tensor<i64>)
// CHECK:         %[[P1:[^,]+]], %[[M1:[^,]+]], %[[V1:[^ ]+]] = xlnet.adam_update %[[P]], %[[G]], %[[M]], %[[V]] lr(%[[LR]]) grad_norm(%[[N]]) step(%[[STEP]]) beta1 = 9.000000e-01 beta2 = 0.99899999999999999 epsilon = 9.9999999999999995E-7 clip = 0.000000e+00 weight_decay = 1.000000e-02 : (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<f32>, tensor<f32>, tensor<i64>) -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>)
// CHECK-NOT:     bias_correction
// CHECK:         return %[[P1]], %[[M1]], %[[V1]]
func.func @adam_update_weight_decay(
    %p: tensor<64x32xf32>, %g: tensor<64x32xf32>, %m: tensor<64x32xf32>, %v: tensor<64x32xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>)
    -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>) {
  %p1, %m1, %v1 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 0.9 beta2 = 0.999 epsilon = 1.0e-6 clip = 0.0 weight_decay = 0.01
      : (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>,
         tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>)
  return %p1, %m1, %v1 : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64x32xf32>
}

}

// Without incoming memory (first segment): only h, and
// L = min(mem_len, 0 + reuse_len) = min(8, 4) = 4.
// CHECK-LABEL: func.func @mem_cache_without_mems(
// CHECK-SAME:    %[[H:[^:]+]]: tensor<2x16x32xf32>)
// CHECK:         %[[NEW_MEMS:.+]] = xlnet.mem_cache %[[H]] reuse_len = 4 mem_len = 8 : (tensor<2x16x32xf32>) -> tensor<4x2x32xf32>
// CHECK:         return %[[NEW_MEMS]]
func.func @mem_cache_without_mems(%h: tensor<2x16x32xf32>) -> tensor<4x2x32xf32> {
  %0 = xlnet.mem_cache %h reuse_len = 4 mem_len = 8 : (tensor<2x16x32xf32>) -> tensor<4x2x32xf32>
  return %0 : tensor<4x2x32xf32>
}

// Compact masks with the bits of a perm_mask: [B, S, ceil(S/64)]; with
// S = 2 the bits [B, 2, 1] are told apart from ranks [B, 2, 2].
// CHECK-LABEL: func.func @rel_attention_compact_bits(
// CHECK:         xlnet.rel_attention {{.*}} : ({{.*}}tensor<2x2xi64>, tensor<2x2x1xi64>) -> tensor<2x2x2x16xf32>
func.func @rel_attention_compact_bits(%q: tensor<2x2x2x16xf32>, %k: tensor<2x10x2x16xf32>,
    %v: tensor<2x10x2x16xf32>, %kr: tensor<1x12x2x16xf32>, %se: tensor<2x2x16xf32>,
    %rw: tensor<2x16xf32>, %seg_id: tensor<2x2xi64>, %bits: tensor<2x2x1xi64>) -> tensor<2x2x2x16xf32> {
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rw, %rw)
      seg_mat(%seg_id) mask(%bits) scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x2x2x16xf32>, tensor<2x10x2x16xf32>, tensor<2x10x2x16xf32>, tensor<1x12x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2xi64>, tensor<2x2x1xi64>) -> tensor<2x2x2x16xf32>
  return %0 : tensor<2x2x2x16xf32>
}

// The attention with compact masks: segment ids [B, S] and ranks [B, 2, S].
// CHECK-LABEL: func.func @rel_attention_compact(
// CHECK:         xlnet.rel_attention {{.*}} seg_mat(%{{.+}}) mask(%{{.+}}) rows(%{{.+}}) scale = 2.500000e-01 dropatt = 0.000000e+00 : ({{.*}}tensor<2x16xi64>, tensor<2x2x16xi64>, tensor<2x5xi64>) -> tensor<2x5x2x16xf32>
func.func @rel_attention_compact(%q: tensor<2x5x2x16xf32>, %k: tensor<2x24x2x16xf32>,
    %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>,
    %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg_id: tensor<2x16xi64>, %rank: tensor<2x2x16xi64>, %rows: tensor<2x5xi64>) -> tensor<2x5x2x16xf32> {
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rr, %rs)
      seg_mat(%seg_id) mask(%rank) rows(%rows) scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xi64>, tensor<2x2x16xi64>, tensor<2x5xi64>) -> tensor<2x5x2x16xf32>
  return %0 : tensor<2x5x2x16xf32>
}

// -----

// Mixed precision (--xlnet-mixed-precision): casts, and a GEMM on bf16
// operands with a bf16 bias.
// CHECK-LABEL: func.func @bf16_gemm(
// CHECK:         %[[W16:.+]] = xlnet.cast %[[W:.+]] : tensor<32x48xf32> to tensor<32x48xbf16>
// CHECK:         %[[Y:.+]] = xlnet.gemm %{{.+}}, %[[W16]] bias %{{.+}} : (tensor<2x16x32xbf16>, tensor<32x48xbf16>, tensor<48xbf16>) -> tensor<2x16x48xbf16>
// CHECK:         xlnet.cast %[[Y]] : tensor<2x16x48xbf16> to tensor<2x16x48xf32>
func.func @bf16_gemm(%x: tensor<2x16x32xbf16>, %w: tensor<32x48xf32>,
                     %b: tensor<48xbf16>) -> tensor<2x16x48xf32> {
  %w16 = xlnet.cast %w : tensor<32x48xf32> to tensor<32x48xbf16>
  %y = xlnet.gemm %x, %w16 bias %b
      : (tensor<2x16x32xbf16>, tensor<32x48xbf16>, tensor<48xbf16>) -> tensor<2x16x48xbf16>
  %0 = xlnet.cast %y : tensor<2x16x48xbf16> to tensor<2x16x48xf32>
  return %0 : tensor<2x16x48xf32>
}
