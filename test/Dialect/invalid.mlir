// RUN: xlnet-opt %s -split-input-file -verify-diagnostics

// One case per verifier error path of the `xlnet` ops (XLNetOps.cpp), plus a
// few type-constraint errors that fire before the verifier. Unless a case
// says otherwise the shapes are those of the tiny model: B = 2, S = 16,
// M = 8, K = M + S = 24, R = K + S = 40, D = 32, N = 2, H = 16, I = 48,
// V = 64, NP = 5. Each case changes one thing of a valid op.

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

// ids must be [B, S].
func.func @embedding_ids_rank(%ids: tensor<2x16x1xi64>, %table: tensor<64x32xf32>) {
  // expected-error @+1 {{'xlnet.embedding' op 'ids' must have rank 2 [B, S], got 'tensor<2x16x1xi64>'}}
  %0 = xlnet.embedding %ids, %table : (tensor<2x16x1xi64>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// table must be [V, D].
func.func @embedding_table_rank(%ids: tensor<2x16xi64>, %table: tensor<2048xf32>) {
  // expected-error @+1 {{'xlnet.embedding' op 'table' must have rank 2 [V, D], got 'tensor<2048xf32>'}}
  %0 = xlnet.embedding %ids, %table : (tensor<2x16xi64>, tensor<2048xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// result must be [B, S, D].
func.func @embedding_result_rank(%ids: tensor<2x16xi64>, %table: tensor<64x32xf32>) {
  // expected-error @+1 {{'xlnet.embedding' op 'result' must have rank 3 [B, S, D], got 'tensor<2x16x32x1xf32>'}}
  %0 = xlnet.embedding %ids, %table : (tensor<2x16xi64>, tensor<64x32xf32>) -> tensor<2x16x32x1xf32>
  return
}

// -----

// result B differs from ids B.
func.func @embedding_batch(%ids: tensor<2x16xi64>, %table: tensor<64x32xf32>) {
  // expected-error @+1 {{'xlnet.embedding' op B mismatch: 'result' dim 0 is 3 but 'ids' dim 0 is 2}}
  %0 = xlnet.embedding %ids, %table : (tensor<2x16xi64>, tensor<64x32xf32>) -> tensor<3x16x32xf32>
  return
}

// -----

// result S differs from ids S.
func.func @embedding_seq(%ids: tensor<2x16xi64>, %table: tensor<64x32xf32>) {
  // expected-error @+1 {{'xlnet.embedding' op S mismatch: 'result' dim 1 is 8 but 'ids' dim 1 is 16}}
  %0 = xlnet.embedding %ids, %table : (tensor<2x16xi64>, tensor<64x32xf32>) -> tensor<2x8x32xf32>
  return
}

// -----

// result D differs from table D.
func.func @embedding_d_model(%ids: tensor<2x16xi64>, %table: tensor<64x32xf32>) {
  // expected-error @+1 {{'xlnet.embedding' op D mismatch: 'result' dim 2 is 16 but 'table' dim 1 is 32}}
  %0 = xlnet.embedding %ids, %table : (tensor<2x16xi64>, tensor<64x32xf32>) -> tensor<2x16x16xf32>
  return
}

// -----

// Unranked operands are rejected by the type constraint, before the verifier.
func.func @embedding_unranked(%ids: tensor<*xi64>, %table: tensor<64x32xf32>) {
  // expected-error @+1 {{'xlnet.embedding' op operand #0 must be ranked tensor of 64-bit signless integer values, but got 'tensor<*xi64>'}}
  %0 = xlnet.embedding %ids, %table : (tensor<*xi64>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// mask_embedding
//===----------------------------------------------------------------------===//

// mask_emb must be [1, 1, D].
func.func @mask_embedding_rank(%mask_emb: tensor<1x32xf32>) {
  // expected-error @+1 {{'xlnet.mask_embedding' op 'mask_emb' must have rank 3 [1, 1, D], got 'tensor<1x32xf32>'}}
  %0 = xlnet.mask_embedding %mask_emb : (tensor<1x32xf32>) -> tensor<2x5x32xf32>
  return
}

// -----

// mask_emb dim 0 must be the literal 1.
func.func @mask_embedding_dim0(%mask_emb: tensor<2x1x32xf32>) {
  // expected-error @+1 {{'xlnet.mask_embedding' op 'mask_emb' dim 0 must be 1, got 2}}
  %0 = xlnet.mask_embedding %mask_emb : (tensor<2x1x32xf32>) -> tensor<2x5x32xf32>
  return
}

// -----

// mask_emb dim 1 must be the literal 1.
func.func @mask_embedding_dim1(%mask_emb: tensor<1x5x32xf32>) {
  // expected-error @+1 {{'xlnet.mask_embedding' op 'mask_emb' dim 1 must be 1, got 5}}
  %0 = xlnet.mask_embedding %mask_emb : (tensor<1x5x32xf32>) -> tensor<2x5x32xf32>
  return
}

// -----

// result must be [B, NP, D].
func.func @mask_embedding_result_rank(%mask_emb: tensor<1x1x32xf32>) {
  // expected-error @+1 {{'xlnet.mask_embedding' op 'result' must have rank 3 [B, NP, D], got 'tensor<10x32xf32>'}}
  %0 = xlnet.mask_embedding %mask_emb : (tensor<1x1x32xf32>) -> tensor<10x32xf32>
  return
}

// -----

// result D differs from mask_emb D.
func.func @mask_embedding_d_model(%mask_emb: tensor<1x1x32xf32>) {
  // expected-error @+1 {{'xlnet.mask_embedding' op D mismatch: 'result' dim 2 is 16 but 'mask_emb' dim 2 is 32}}
  %0 = xlnet.mask_embedding %mask_emb : (tensor<1x1x32xf32>) -> tensor<2x5x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// rel_pos_encoding
//===----------------------------------------------------------------------===//

// qlen must be positive.
func.func @rel_pos_encoding_qlen_zero() {
  // expected-error @+1 {{'xlnet.rel_pos_encoding' op qlen must be > 0, got 0}}
  %0 = xlnet.rel_pos_encoding klen = 24 qlen = 0 clamp_len = -1 : tensor<1x24x32xf32>
  return
}

// -----

// klen = mlen + qlen can not be below qlen.
func.func @rel_pos_encoding_klen_lt_qlen() {
  // expected-error @+1 {{'xlnet.rel_pos_encoding' op klen (8) must be >= qlen (16)}}
  %0 = xlnet.rel_pos_encoding klen = 8 qlen = 16 clamp_len = -1 : tensor<1x24x32xf32>
  return
}

// -----

// result must be [P, R, D].
func.func @rel_pos_encoding_result_rank() {
  // expected-error @+1 {{'xlnet.rel_pos_encoding' op 'result' must have rank 3 [P, R, D], got 'tensor<40x32xf32>'}}
  %0 = xlnet.rel_pos_encoding klen = 24 qlen = 16 clamp_len = -1 : tensor<40x32xf32>
  return
}

// -----

// Without bi_data there is one copy (P = 1).
func.func @rel_pos_encoding_copies_without_bi_data() {
  // expected-error @+1 {{'xlnet.rel_pos_encoding' op P mismatch: 'result' dim 0 is 2 but the copy count without bi_data is 1}}
  %0 = xlnet.rel_pos_encoding klen = 24 qlen = 16 clamp_len = -1 : tensor<2x40x32xf32>
  return
}

// -----

// With bi_data there are two copies (P = 2).
func.func @rel_pos_encoding_copies_with_bi_data() {
  // expected-error @+1 {{'xlnet.rel_pos_encoding' op P mismatch: 'result' dim 0 is 1 but the copy count with bi_data is 2}}
  %0 = xlnet.rel_pos_encoding klen = 24 qlen = 16 clamp_len = -1 bi_data : tensor<1x40x32xf32>
  return
}

// -----

// R must be klen + qlen = 40.
func.func @rel_pos_encoding_rlen() {
  // expected-error @+1 {{'xlnet.rel_pos_encoding' op R mismatch: 'result' dim 1 is 24 but klen + qlen is 40}}
  %0 = xlnet.rel_pos_encoding klen = 24 qlen = 16 clamp_len = -1 : tensor<1x24x32xf32>
  return
}

// -----

// d_model must be even (sin and cos halves).
func.func @rel_pos_encoding_odd_d_model() {
  // expected-error @+1 {{'xlnet.rel_pos_encoding' op d_model (result dim 2) must be even for sin/cos halves, got 33}}
  %0 = xlnet.rel_pos_encoding klen = 24 qlen = 16 clamp_len = -1 : tensor<1x40x33xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// rel_segment
//===----------------------------------------------------------------------===//

// mlen can not be negative.
func.func @rel_segment_negative_mlen(%seg_id: tensor<2x16xi64>) {
  // expected-error @+1 {{'xlnet.rel_segment' op mlen must be >= 0, got -1}}
  %0 = xlnet.rel_segment %seg_id mlen = -1 : (tensor<2x16xi64>) -> tensor<2x16x15xi1>
  return
}

// -----

// seg_id must be [B, S].
func.func @rel_segment_seg_id_rank(%seg_id: tensor<32xi64>) {
  // expected-error @+1 {{'xlnet.rel_segment' op 'seg_id' must have rank 2 [B, S], got 'tensor<32xi64>'}}
  %0 = xlnet.rel_segment %seg_id mlen = 8 : (tensor<32xi64>) -> tensor<2x16x24xi1>
  return
}

// -----

// result must be [B, S, K].
func.func @rel_segment_result_rank(%seg_id: tensor<2x16xi64>) {
  // expected-error @+1 {{'xlnet.rel_segment' op 'result' must have rank 3 [B, S, K], got 'tensor<2x384xi1>'}}
  %0 = xlnet.rel_segment %seg_id mlen = 8 : (tensor<2x16xi64>) -> tensor<2x384xi1>
  return
}

// -----

// result B differs from seg_id B.
func.func @rel_segment_batch(%seg_id: tensor<2x16xi64>) {
  // expected-error @+1 {{'xlnet.rel_segment' op B mismatch: 'result' dim 0 is 1 but 'seg_id' dim 0 is 2}}
  %0 = xlnet.rel_segment %seg_id mlen = 8 : (tensor<2x16xi64>) -> tensor<1x16x24xi1>
  return
}

// -----

// result S differs from seg_id S.
func.func @rel_segment_seq(%seg_id: tensor<2x16xi64>) {
  // expected-error @+1 {{'xlnet.rel_segment' op S mismatch: 'result' dim 1 is 8 but 'seg_id' dim 1 is 16}}
  %0 = xlnet.rel_segment %seg_id mlen = 8 : (tensor<2x16xi64>) -> tensor<2x8x24xi1>
  return
}

// -----

// K must be mlen + S = 24.
func.func @rel_segment_klen(%seg_id: tensor<2x16xi64>) {
  // expected-error @+1 {{'xlnet.rel_segment' op K mismatch: 'result' dim 2 is 16 but mlen + S is 24}}
  %0 = xlnet.rel_segment %seg_id mlen = 8 : (tensor<2x16xi64>) -> tensor<2x16x16xi1>
  return
}

// -----

//===----------------------------------------------------------------------===//
// attn_mask
//===----------------------------------------------------------------------===//

// mlen can not be negative.
func.func @attn_mask_negative_mlen(%perm_mask: tensor<2x16x16xf32>) {
  // expected-error @+1 {{'xlnet.attn_mask' op mlen must be >= 0, got -8}}
  %0 = xlnet.attn_mask query %perm_mask mlen = -8 : (tensor<2x16x16xf32>) -> tensor<2x16x8xi1>
  return
}

// -----

// perm_mask must be [B, S, S].
func.func @attn_mask_perm_mask_rank(%perm_mask: tensor<2x16xf32>) {
  // expected-error @+1 {{'xlnet.attn_mask' op 'perm_mask' must have rank 3 [B, S, S], got 'tensor<2x16xf32>'}}
  %0 = xlnet.attn_mask query %perm_mask mlen = 8 : (tensor<2x16xf32>) -> tensor<2x16x24xi1>
  return
}

// -----

// perm_mask must be square in its last two dims.
func.func @attn_mask_perm_mask_not_square(%perm_mask: tensor<2x16x8xf32>) {
  // expected-error @+1 {{'xlnet.attn_mask' op S mismatch: 'perm_mask' dim 2 is 8 but 'perm_mask' dim 1 is 16}}
  %0 = xlnet.attn_mask query %perm_mask mlen = 8 : (tensor<2x16x8xf32>) -> tensor<2x16x24xi1>
  return
}

// -----

// result must be [B, S, K].
func.func @attn_mask_result_rank(%perm_mask: tensor<2x16x16xf32>) {
  // expected-error @+1 {{'xlnet.attn_mask' op 'result' must have rank 3 [B, S, K], got 'tensor<2x384xi1>'}}
  %0 = xlnet.attn_mask query %perm_mask mlen = 8 : (tensor<2x16x16xf32>) -> tensor<2x384xi1>
  return
}

// -----

// result B differs from perm_mask B.
func.func @attn_mask_batch(%perm_mask: tensor<2x16x16xf32>) {
  // expected-error @+1 {{'xlnet.attn_mask' op B mismatch: 'result' dim 0 is 4 but 'perm_mask' dim 0 is 2}}
  %0 = xlnet.attn_mask content %perm_mask mlen = 8 : (tensor<2x16x16xf32>) -> tensor<4x16x24xi1>
  return
}

// -----

// result S differs from perm_mask S.
func.func @attn_mask_seq(%perm_mask: tensor<2x16x16xf32>) {
  // expected-error @+1 {{'xlnet.attn_mask' op S mismatch: 'result' dim 1 is 15 but 'perm_mask' dim 1 is 16}}
  %0 = xlnet.attn_mask content %perm_mask mlen = 8 : (tensor<2x16x16xf32>) -> tensor<2x15x24xi1>
  return
}

// -----

// Query stream: K must be mlen + S = 24.
func.func @attn_mask_klen_query(%perm_mask: tensor<2x16x16xf32>) {
  // expected-error @+1 {{'xlnet.attn_mask' op K mismatch: 'result' dim 2 is 16 but mlen + S is 24}}
  %0 = xlnet.attn_mask query %perm_mask mlen = 8 : (tensor<2x16x16xf32>) -> tensor<2x16x16xi1>
  return
}

// -----

// Content stream without memory: K must be 0 + S = 16.
func.func @attn_mask_klen_content(%perm_mask: tensor<2x16x16xf32>) {
  // expected-error @+1 {{'xlnet.attn_mask' op K mismatch: 'result' dim 2 is 24 but mlen + S is 16}}
  %0 = xlnet.attn_mask content %perm_mask mlen = 0 : (tensor<2x16x16xf32>) -> tensor<2x16x24xi1>
  return
}

// -----

//===----------------------------------------------------------------------===//
// target_positions
//===----------------------------------------------------------------------===//

// target_mapping must be [B, NP, S].
func.func @target_positions_mapping_rank(%target_mapping: tensor<10x16xf32>) {
  // expected-error @+1 {{'xlnet.target_positions' op 'target_mapping' must have rank 3 [B, NP, S], got 'tensor<10x16xf32>'}}
  %0 = xlnet.target_positions %target_mapping : (tensor<10x16xf32>) -> tensor<2x5xi64>
  return
}

// -----

// result must be [B, NP].
func.func @target_positions_result_rank(%target_mapping: tensor<2x5x16xf32>) {
  // expected-error @+1 {{'xlnet.target_positions' op 'result' must have rank 2 [B, NP], got 'tensor<2x5x1xi64>'}}
  %0 = xlnet.target_positions %target_mapping : (tensor<2x5x16xf32>) -> tensor<2x5x1xi64>
  return
}

// -----

// result B differs from target_mapping B.
func.func @target_positions_batch(%target_mapping: tensor<2x5x16xf32>) {
  // expected-error @+1 {{'xlnet.target_positions' op B mismatch: 'result' dim 0 is 1 but 'target_mapping' dim 0 is 2}}
  %0 = xlnet.target_positions %target_mapping : (tensor<2x5x16xf32>) -> tensor<1x5xi64>
  return
}

// -----

// result NP differs from target_mapping NP.
func.func @target_positions_num_predict(%target_mapping: tensor<2x5x16xf32>) {
  // expected-error @+1 {{'xlnet.target_positions' op NP mismatch: 'result' dim 1 is 16 but 'target_mapping' dim 1 is 5}}
  %0 = xlnet.target_positions %target_mapping : (tensor<2x5x16xf32>) -> tensor<2x16xi64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// mem_concat
//===----------------------------------------------------------------------===//

// mems must be time-major [M, B, D].
func.func @mem_concat_mems_rank(%mems: tensor<16x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_concat' op 'mems' must have rank 3 [M, B, D], got 'tensor<16x32xf32>'}}
  %0 = xlnet.mem_concat %mems, %h : (tensor<16x32xf32>, tensor<2x16x32xf32>) -> tensor<2x24x32xf32>
  return
}

// -----

// h must be [B, S, D].
func.func @mem_concat_h_rank(%mems: tensor<8x2x32xf32>, %h: tensor<32x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_concat' op 'h' must have rank 3 [B, S, D], got 'tensor<32x32xf32>'}}
  %0 = xlnet.mem_concat %mems, %h : (tensor<8x2x32xf32>, tensor<32x32xf32>) -> tensor<2x24x32xf32>
  return
}

// -----

// result must be [B, K, D].
func.func @mem_concat_result_rank(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_concat' op 'result' must have rank 3 [B, K, D], got 'tensor<48x32xf32>'}}
  %0 = xlnet.mem_concat %mems, %h : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<48x32xf32>
  return
}

// -----

// h B differs from mems B (mems are time-major: B is dim 1).
func.func @mem_concat_batch(%mems: tensor<2x8x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_concat' op B mismatch: 'h' dim 0 is 2 but 'mems' dim 1 is 8}}
  %0 = xlnet.mem_concat %mems, %h : (tensor<2x8x32xf32>, tensor<2x16x32xf32>) -> tensor<2x24x32xf32>
  return
}

// -----

// h D differs from mems D.
func.func @mem_concat_d_model(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x64xf32>) {
  // expected-error @+1 {{'xlnet.mem_concat' op D mismatch: 'h' dim 2 is 64 but 'mems' dim 2 is 32}}
  %0 = xlnet.mem_concat %mems, %h : (tensor<8x2x32xf32>, tensor<2x16x64xf32>) -> tensor<2x24x32xf32>
  return
}

// -----

// result D differs from mems D.
func.func @mem_concat_result_d_model(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_concat' op D mismatch: 'result' dim 2 is 16 but 'mems' dim 2 is 32}}
  %0 = xlnet.mem_concat %mems, %h : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<2x24x16xf32>
  return
}

// -----

// K must be M + S = 24.
func.func @mem_concat_klen(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_concat' op K mismatch: 'result' dim 1 is 16 but M + S is 24}}
  %0 = xlnet.mem_concat %mems, %h : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// mem_cache
//===----------------------------------------------------------------------===//

// Written in the generic form so that the cases do not depend on how the custom
// format spells the optional `mems` operand.

// reuse_len must be positive.
func.func @mem_cache_reuse_len_zero(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op reuse_len and mem_len must be > 0, got 0 and 8}}
  %0 = "xlnet.mem_cache"(%mems, %h) <{mem_len = 8 : i64, reuse_len = 0 : i64}> : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<8x2x32xf32>
  return
}

// -----

// mem_len must be positive (a layer without memory has no mem_cache).
func.func @mem_cache_mem_len_zero(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op reuse_len and mem_len must be > 0, got 8 and 0}}
  %0 = "xlnet.mem_cache"(%mems, %h) <{mem_len = 0 : i64, reuse_len = 8 : i64}> : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<8x2x32xf32>
  return
}

// -----

// h must be [B, S, D].
func.func @mem_cache_h_rank(%mems: tensor<8x2x32xf32>, %h: tensor<32x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op 'h' must have rank 3 [B, S, D], got 'tensor<32x32xf32>'}}
  %0 = "xlnet.mem_cache"(%mems, %h) <{mem_len = 8 : i64, reuse_len = 8 : i64}> : (tensor<8x2x32xf32>, tensor<32x32xf32>) -> tensor<8x2x32xf32>
  return
}

// -----

// mems must be time-major [M, B, D].
func.func @mem_cache_mems_rank(%mems: tensor<8x64xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op 'mems' must have rank 3 [M, B, D], got 'tensor<8x64xf32>'}}
  %0 = "xlnet.mem_cache"(%mems, %h) <{mem_len = 8 : i64, reuse_len = 8 : i64}> : (tensor<8x64xf32>, tensor<2x16x32xf32>) -> tensor<8x2x32xf32>
  return
}

// -----

// result must be time-major [L, B, D].
func.func @mem_cache_result_rank(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op 'result' must have rank 3 [L, B, D], got 'tensor<8x64xf32>'}}
  %0 = "xlnet.mem_cache"(%mems, %h) <{mem_len = 8 : i64, reuse_len = 8 : i64}> : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<8x64xf32>
  return
}

// -----

// mems B (dim 1) differs from h B.
func.func @mem_cache_batch(%mems: tensor<8x4x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op B mismatch: 'mems' dim 1 is 4 but 'h' dim 0 is 2}}
  %0 = "xlnet.mem_cache"(%mems, %h) <{mem_len = 8 : i64, reuse_len = 8 : i64}> : (tensor<8x4x32xf32>, tensor<2x16x32xf32>) -> tensor<8x2x32xf32>
  return
}

// -----

// mems D differs from h D.
func.func @mem_cache_d_model(%mems: tensor<8x2x16xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op D mismatch: 'mems' dim 2 is 16 but 'h' dim 2 is 32}}
  %0 = "xlnet.mem_cache"(%mems, %h) <{mem_len = 8 : i64, reuse_len = 8 : i64}> : (tensor<8x2x16xf32>, tensor<2x16x32xf32>) -> tensor<8x2x32xf32>
  return
}

// -----

// result B differs from h B.
func.func @mem_cache_result_batch(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op B mismatch: 'result' dim 1 is 1 but 'h' dim 0 is 2}}
  %0 = "xlnet.mem_cache"(%mems, %h) <{mem_len = 8 : i64, reuse_len = 8 : i64}> : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<8x1x32xf32>
  return
}

// -----

// reuse_len can not exceed the segment length S = 16.
func.func @mem_cache_reuse_len_gt_seq(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op reuse_len (17) exceeds the segment length S (16)}}
  %0 = "xlnet.mem_cache"(%mems, %h) <{mem_len = 8 : i64, reuse_len = 17 : i64}> : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<8x2x32xf32>
  return
}

// -----

// With mems, L = min(mem_len, M + reuse_len) = min(8, 16) = 8.
func.func @mem_cache_len_truncated(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op L mismatch: 'result' dim 0 is 16 but min(mem_len, M + reuse_len) is 8}}
  %0 = "xlnet.mem_cache"(%mems, %h) <{mem_len = 8 : i64, reuse_len = 8 : i64}> : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<16x2x32xf32>
  return
}

// -----

// With mems, L = min(mem_len, M + reuse_len) = min(16, 4 + 8) = 12.
func.func @mem_cache_len_short_memory(%mems: tensor<4x2x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op L mismatch: 'result' dim 0 is 16 but min(mem_len, M + reuse_len) is 12}}
  %0 = "xlnet.mem_cache"(%mems, %h) <{mem_len = 16 : i64, reuse_len = 8 : i64}> : (tensor<4x2x32xf32>, tensor<2x16x32xf32>) -> tensor<16x2x32xf32>
  return
}

// -----

// Without mems, L = min(mem_len, 0 + reuse_len) = min(8, 4) = 4.
func.func @mem_cache_len_without_mems(%h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op L mismatch: 'result' dim 0 is 8 but min(mem_len, M + reuse_len) is 4}}
  %0 = "xlnet.mem_cache"(%h) <{mem_len = 8 : i64, reuse_len = 4 : i64}> : (tensor<2x16x32xf32>) -> tensor<8x2x32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// head_proj
//===----------------------------------------------------------------------===//

// x must be [A, T, D].
func.func @head_proj_x_rank(%x: tensor<32x32xf32>, %w: tensor<32x2x16xf32>) {
  // expected-error @+1 {{'xlnet.head_proj' op 'x' must have rank 3 [A, T, D], got 'tensor<32x32xf32>'}}
  %0 = xlnet.head_proj %x, %w : (tensor<32x32xf32>, tensor<32x2x16xf32>) -> tensor<2x16x2x16xf32>
  return
}

// -----

// weight must be [D, N, H] (not the flattened [D, N*H]).
func.func @head_proj_weight_rank(%x: tensor<2x16x32xf32>, %w: tensor<32x32xf32>) {
  // expected-error @+1 {{'xlnet.head_proj' op 'weight' must have rank 3 [D, N, H], got 'tensor<32x32xf32>'}}
  %0 = xlnet.head_proj %x, %w : (tensor<2x16x32xf32>, tensor<32x32xf32>) -> tensor<2x16x2x16xf32>
  return
}

// -----

// result must be [A, T, N, H].
func.func @head_proj_result_rank(%x: tensor<2x16x32xf32>, %w: tensor<32x2x16xf32>) {
  // expected-error @+1 {{'xlnet.head_proj' op 'result' must have rank 4 [A, T, N, H], got 'tensor<2x16x32xf32>'}}
  %0 = xlnet.head_proj %x, %w : (tensor<2x16x32xf32>, tensor<32x2x16xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// weight D differs from x D.
func.func @head_proj_d_model(%x: tensor<2x16x32xf32>, %w: tensor<64x2x16xf32>) {
  // expected-error @+1 {{'xlnet.head_proj' op D mismatch: 'weight' dim 0 is 64 but 'x' dim 2 is 32}}
  %0 = xlnet.head_proj %x, %w : (tensor<2x16x32xf32>, tensor<64x2x16xf32>) -> tensor<2x16x2x16xf32>
  return
}

// -----

// result T differs from x T.
func.func @head_proj_result_rows(%x: tensor<2x16x32xf32>, %w: tensor<32x2x16xf32>) {
  // expected-error @+1 {{'xlnet.head_proj' op T mismatch: 'result' dim 1 is 5 but 'x' dim 1 is 16}}
  %0 = xlnet.head_proj %x, %w : (tensor<2x16x32xf32>, tensor<32x2x16xf32>) -> tensor<2x5x2x16xf32>
  return
}

// -----

// result A differs from x A.
func.func @head_proj_result_batch(%x: tensor<2x16x32xf32>, %w: tensor<32x2x16xf32>) {
  // expected-error @+1 {{'xlnet.head_proj' op A mismatch: 'result' dim 0 is 1 but 'x' dim 0 is 2}}
  %0 = xlnet.head_proj %x, %w : (tensor<2x16x32xf32>, tensor<32x2x16xf32>) -> tensor<1x16x2x16xf32>
  return
}

// -----

// result N differs from weight N.
func.func @head_proj_result_heads(%x: tensor<2x16x32xf32>, %w: tensor<32x2x16xf32>) {
  // expected-error @+1 {{'xlnet.head_proj' op N mismatch: 'result' dim 2 is 4 but 'weight' dim 1 is 2}}
  %0 = xlnet.head_proj %x, %w : (tensor<2x16x32xf32>, tensor<32x2x16xf32>) -> tensor<2x16x4x16xf32>
  return
}

// -----

// result H differs from weight H.
func.func @head_proj_result_head_dim(%x: tensor<2x16x32xf32>, %w: tensor<32x2x16xf32>) {
  // expected-error @+1 {{'xlnet.head_proj' op H mismatch: 'result' dim 3 is 8 but 'weight' dim 2 is 16}}
  %0 = xlnet.head_proj %x, %w : (tensor<2x16x32xf32>, tensor<32x2x16xf32>) -> tensor<2x16x2x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// rel_attention
//===----------------------------------------------------------------------===//

// q must be [B, T, N, H].
func.func @rel_attention_q_rank(
    %q: tensor<2x16x32xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'q' must have rank 4 [B, T, N, H], got 'tensor<2x16x32xf32>'}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// k must be [B, K, N, H].
func.func @rel_attention_k_rank(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x32xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'k' must have rank 4 [B, K, N, H], got 'tensor<2x24x32xf32>'}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x32xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// v must be [B, K, N, H].
func.func @rel_attention_v_rank(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x32xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'v' must have rank 4 [B, K, N, H], got 'tensor<2x24x32xf32>'}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x32xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// k_r must be [P, R, N, H].
func.func @rel_attention_k_r_rank(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'k_r' must have rank 4 [P, R, N, H], got 'tensor<40x2x16xf32>'}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// seg_embed must be [2, N, H].
func.func @rel_attention_seg_embed_rank(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x32xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'seg_embed' must have rank 3 [2, N, H], got 'tensor<2x32xf32>'}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x32xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// r_w_bias must be [N, H].
func.func @rel_attention_r_w_bias_rank(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<32xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'r_w_bias' must have rank 2 [N, H], got 'tensor<32xf32>'}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// r_r_bias must be [N, H].
func.func @rel_attention_r_r_bias_rank(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<1x2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'r_r_bias' must have rank 2 [N, H], got 'tensor<1x2x16xf32>'}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<1x2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// r_s_bias must be [N, H].
func.func @rel_attention_r_s_bias_rank(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<32xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'r_s_bias' must have rank 2 [N, H], got 'tensor<32xf32>'}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// seg_mat must be [B, S, K].
func.func @rel_attention_seg_mat_rank(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'seg_mat' must have rank 3 [B, S, K], got 'tensor<16x24xi1>'}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// mask must be [B, S, K].
func.func @rel_attention_mask_rank(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'mask' must have rank 3 [B, S, K], got 'tensor<16x24xi1>'}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// rows must be [B, T].
func.func @rel_attention_rows_rank(
    %q: tensor<2x5x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>, %rows: tensor<10xi64>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'rows' must have rank 2 [B, T], got 'tensor<10xi64>'}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask) rows(%rows)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<10xi64>)
      -> tensor<2x5x2x16xf32>
  return
}

// -----

// result must be [B, T, N, H].
func.func @rel_attention_result_rank(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'result' must have rank 4 [B, T, N, H], got 'tensor<2x16x32xf32>'}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x32xf32>
  return
}

// -----

// k B differs from q B.
func.func @rel_attention_k_batch(
    %q: tensor<2x16x2x16xf32>, %k: tensor<1x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op B mismatch: 'k' dim 0 is 1 but 'q' dim 0 is 2}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<1x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// k H differs from q H.
func.func @rel_attention_k_head_dim(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x8xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op H mismatch: 'k' dim 3 is 8 but 'q' dim 3 is 16}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x8xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// v K differs from k K.
func.func @rel_attention_v_klen(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x16x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op K mismatch: 'v' dim 1 is 16 but 'k' dim 1 is 24}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x16x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// k_r N differs from q N.
func.func @rel_attention_k_r_heads(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x4x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op N mismatch: 'k_r' dim 2 is 4 but 'q' dim 2 is 2}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x4x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// seg_embed dim 0 must be the literal 2 (same / different segment).
func.func @rel_attention_seg_embed_dim0(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<1x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'seg_embed' dim 0 must be 2, got 1}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<1x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// r_r_bias H differs from q H.
func.func @rel_attention_r_r_bias_head_dim(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x8xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op H mismatch: 'r_r_bias' dim 1 is 8 but 'q' dim 3 is 16}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x8xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// seg_mat K differs from k K.
func.func @rel_attention_seg_mat_klen(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x16xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op K mismatch: 'seg_mat' dim 2 is 16 but 'k' dim 1 is 24}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x16xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// mask S differs from seg_mat S.
func.func @rel_attention_mask_seq(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x8x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op S mismatch: 'mask' dim 1 is 8 but 'seg_mat' dim 1 is 16}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x8x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// rows B differs from q B.
func.func @rel_attention_rows_batch(
    %q: tensor<2x5x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>, %rows: tensor<1x5xi64>) {
  // expected-error @+1 {{'xlnet.rel_attention' op B mismatch: 'rows' dim 0 is 1 but 'q' dim 0 is 2}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask) rows(%rows)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<1x5xi64>)
      -> tensor<2x5x2x16xf32>
  return
}

// -----

// rows T differs from q T.
func.func @rel_attention_rows_count(
    %q: tensor<2x5x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>, %rows: tensor<2x4xi64>) {
  // expected-error @+1 {{'xlnet.rel_attention' op T mismatch: 'rows' dim 1 is 4 but 'q' dim 1 is 5}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask) rows(%rows)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x4xi64>)
      -> tensor<2x5x2x16xf32>
  return
}

// -----

// result T differs from q T.
func.func @rel_attention_result_rows(
    %q: tensor<2x5x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>) {
  // expected-error @+1 {{'xlnet.rel_attention' op T mismatch: 'result' dim 1 is 16 but 'q' dim 1 is 5}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask) rows(%rows)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// R must be K + S = 40.
func.func @rel_attention_rlen(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x24x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op R mismatch: 'k_r' dim 1 is 24 but K + S is 40}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x24x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// Without rows every position is a query row: T must be S = 16.
func.func @rel_attention_rows_required(
    %q: tensor<2x5x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op T mismatch: 'q' dim 1 is 5 but S (no rows given) is 16}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x5x2x16xf32>
  return
}

// -----

// k_r can hold 1 or 2 positional copies only.
func.func @rel_attention_three_copies(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<3x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'k_r' dim 0 (3 positional copies) must be 1 or 2 and divide the batch size B (2)}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<3x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// Two bi_data copies need an even batch (each half uses one copy).
func.func @rel_attention_copies_odd_batch(
    %q: tensor<3x16x2x16xf32>, %k: tensor<3x24x2x16xf32>, %v: tensor<3x24x2x16xf32>, %kr: tensor<2x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<3x16x24xi1>, %mask: tensor<3x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op 'k_r' dim 0 (2 positional copies) must be 1 or 2 and divide the batch size B (3)}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<3x16x2x16xf32>, tensor<3x24x2x16xf32>, tensor<3x24x2x16xf32>, tensor<2x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<3x16x24xi1>, tensor<3x16x24xi1>)
      -> tensor<3x16x2x16xf32>
  return
}

// -----

// scale must be positive: 0 is rejected.
func.func @rel_attention_scale_zero(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op scale must be > 0}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 0.000000e+00 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// scale must be positive: a negative scale is rejected.
func.func @rel_attention_scale_negative(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op scale must be > 0}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = -2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// dropatt must be in [0, 1): 1 drops everything.
func.func @rel_attention_dropatt_one(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op dropatt must be in [0, 1), got 1.000000e+00}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 1.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

// dropatt must be in [0, 1).
func.func @rel_attention_dropatt_negative(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op dropatt must be in [0, 1), got -1.000000e-01}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = -1.000000e-01
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// post_attention
//===----------------------------------------------------------------------===//

// attn must be [B, T, N, H].
func.func @post_attention_attn_rank(
    %attn: tensor<2x16x32xf32>, %res_in: tensor<2x16x32xf32>, %wo: tensor<32x2x16xf32>, %lnw: tensor<32xf32>,
    %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op 'attn' must have rank 4 [B, T, N, H], got 'tensor<2x16x32xf32>'}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32x2x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// residual must be [B, T, D].
func.func @post_attention_residual_rank(
    %attn: tensor<2x16x2x16xf32>, %res_in: tensor<32x32xf32>, %wo: tensor<32x2x16xf32>, %lnw: tensor<32xf32>,
    %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op 'residual' must have rank 3 [B, T, D], got 'tensor<32x32xf32>'}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<32x32xf32>, tensor<32x2x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// o_weight must be [D, N, H].
func.func @post_attention_o_weight_rank(
    %attn: tensor<2x16x2x16xf32>, %res_in: tensor<2x16x32xf32>, %wo: tensor<32x32xf32>, %lnw: tensor<32xf32>,
    %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op 'o_weight' must have rank 3 [D, N, H], got 'tensor<32x32xf32>'}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// ln_weight must be [D].
func.func @post_attention_ln_weight_rank(
    %attn: tensor<2x16x2x16xf32>, %res_in: tensor<2x16x32xf32>, %wo: tensor<32x2x16xf32>, %lnw: tensor<1x32xf32>,
    %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op 'ln_weight' must have rank 1 [D], got 'tensor<1x32xf32>'}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<32x2x16xf32>, tensor<1x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// ln_bias must be [D].
func.func @post_attention_ln_bias_rank(
    %attn: tensor<2x16x2x16xf32>, %res_in: tensor<2x16x32xf32>, %wo: tensor<32x2x16xf32>, %lnw: tensor<32xf32>,
    %lnb: tensor<1x32xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op 'ln_bias' must have rank 1 [D], got 'tensor<1x32xf32>'}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<32x2x16xf32>, tensor<32xf32>, tensor<1x32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// result must be [B, T, D].
func.func @post_attention_result_rank(
    %attn: tensor<2x16x2x16xf32>, %res_in: tensor<2x16x32xf32>, %wo: tensor<32x2x16xf32>, %lnw: tensor<32xf32>,
    %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op 'result' must have rank 3 [B, T, D], got 'tensor<32x32xf32>'}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<32x2x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<32x32xf32>
  return
}

// -----

// residual T differs from attn T.
func.func @post_attention_residual_rows(
    %attn: tensor<2x16x2x16xf32>, %res_in: tensor<2x5x32xf32>, %wo: tensor<32x2x16xf32>, %lnw: tensor<32xf32>,
    %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op T mismatch: 'residual' dim 1 is 5 but 'attn' dim 1 is 16}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x5x32xf32>, tensor<32x2x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// o_weight N differs from attn N.
func.func @post_attention_o_weight_heads(
    %attn: tensor<2x16x2x16xf32>, %res_in: tensor<2x16x32xf32>, %wo: tensor<32x4x16xf32>, %lnw: tensor<32xf32>,
    %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op N mismatch: 'o_weight' dim 1 is 4 but 'attn' dim 2 is 2}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<32x4x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// o_weight D differs from residual D.
func.func @post_attention_o_weight_d_model(
    %attn: tensor<2x16x2x16xf32>, %res_in: tensor<2x16x32xf32>, %wo: tensor<64x2x16xf32>, %lnw: tensor<32xf32>,
    %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op D mismatch: 'o_weight' dim 0 is 64 but 'residual' dim 2 is 32}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<64x2x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// ln_weight D differs from residual D.
func.func @post_attention_ln_weight_d_model(
    %attn: tensor<2x16x2x16xf32>, %res_in: tensor<2x16x32xf32>, %wo: tensor<32x2x16xf32>, %lnw: tensor<64xf32>,
    %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op D mismatch: 'ln_weight' dim 0 is 64 but 'residual' dim 2 is 32}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<32x2x16xf32>, tensor<64xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// ln_bias D differs from residual D.
func.func @post_attention_ln_bias_d_model(
    %attn: tensor<2x16x2x16xf32>, %res_in: tensor<2x16x32xf32>, %wo: tensor<32x2x16xf32>, %lnw: tensor<32xf32>,
    %lnb: tensor<16xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op D mismatch: 'ln_bias' dim 0 is 16 but 'residual' dim 2 is 32}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<32x2x16xf32>, tensor<32xf32>, tensor<16xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// result D differs from residual D.
func.func @post_attention_result_d_model(
    %attn: tensor<2x16x2x16xf32>, %res_in: tensor<2x16x32xf32>, %wo: tensor<32x2x16xf32>, %lnw: tensor<32xf32>,
    %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op D mismatch: 'result' dim 2 is 64 but 'residual' dim 2 is 32}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<32x2x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

// dropout must be in [0, 1).
func.func @post_attention_dropout_one(
    %attn: tensor<2x16x2x16xf32>, %res_in: tensor<2x16x32xf32>, %wo: tensor<32x2x16xf32>, %lnw: tensor<32xf32>,
    %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op dropout must be in [0, 1), got 1.000000e+00}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = 9.9999999999999998E-13 dropout = 1.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<32x2x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// ffn
//===----------------------------------------------------------------------===//

// x must be [B, T, D].
func.func @ffn_x_rank(
    %x: tensor<32x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op 'x' must have rank 3 [B, T, D], got 'tensor<32x32xf32>'}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<32x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// w1 must be [I, D].
func.func @ffn_w1_rank(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32x1xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op 'w1' must have rank 2 [I, D], got 'tensor<48x32x1xf32>'}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32x1xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// b1 must be [I].
func.func @ffn_b1_rank(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<1x48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op 'b1' must have rank 1 [I], got 'tensor<1x48xf32>'}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<1x48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// w2 must be [D, I].
func.func @ffn_w2_rank(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<1536xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op 'w2' must have rank 2 [D, I], got 'tensor<1536xf32>'}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<1536xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// b2 must be [D].
func.func @ffn_b2_rank(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<1x32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op 'b2' must have rank 1 [D], got 'tensor<1x32xf32>'}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<1x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// ln_weight must be [D].
func.func @ffn_ln_weight_rank(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<1x32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op 'ln_weight' must have rank 1 [D], got 'tensor<1x32xf32>'}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<1x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// ln_bias must be [D].
func.func @ffn_ln_bias_rank(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<1x32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op 'ln_bias' must have rank 1 [D], got 'tensor<1x32xf32>'}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<1x32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// result must be [B, T, D].
func.func @ffn_result_rank(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op 'result' must have rank 3 [B, T, D], got 'tensor<32x32xf32>'}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<32x32xf32>
  return
}

// -----

// w1 is [I, D] (HuggingFace layout), not [D, I].
func.func @ffn_w1_not_transposed(
    %x: tensor<2x16x32xf32>, %w1: tensor<32x48xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op D mismatch: 'w1' dim 1 is 48 but 'x' dim 2 is 32}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<32x48xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// b1 I differs from w1 I.
func.func @ffn_b1_inner(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op I mismatch: 'b1' dim 0 is 32 but 'w1' dim 0 is 48}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<32xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// w2 I differs from w1 I.
func.func @ffn_w2_inner(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x64xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op I mismatch: 'w2' dim 1 is 64 but 'w1' dim 0 is 48}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// b2 D differs from x D.
func.func @ffn_b2_d_model(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<48xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op D mismatch: 'b2' dim 0 is 48 but 'x' dim 2 is 32}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<48xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// ln_weight D differs from x D.
func.func @ffn_ln_weight_d_model(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<16xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op D mismatch: 'ln_weight' dim 0 is 16 but 'x' dim 2 is 32}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<16xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// ln_bias D differs from x D.
func.func @ffn_ln_bias_d_model(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<16xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op D mismatch: 'ln_bias' dim 0 is 16 but 'x' dim 2 is 32}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<16xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// result T differs from x T.
func.func @ffn_result_rows(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op T mismatch: 'result' dim 1 is 5 but 'x' dim 1 is 16}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x5x32xf32>
  return
}

// -----

// The FFN needs a nonlinearity: activation none is rejected.
func.func @ffn_activation_none(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op activation must be relu, gelu_tanh or gelu_erf}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = none eps = 9.9999999999999998E-13 dropout = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// dropout must be in [0, 1).
func.func @ffn_dropout_negative(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op dropout must be in [0, 1), got -1.000000e-01}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 9.9999999999999998E-13 dropout = -1.000000e-01
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// lm_head
//===----------------------------------------------------------------------===//

// g must be [B, NP, D].
func.func @lm_head_g_rank(%g: tensor<10x32xf32>, %emb: tensor<64x32xf32>, %bias: tensor<64xf32>) {
  // expected-error @+1 {{'xlnet.lm_head' op 'g' must have rank 3 [B, NP, D], got 'tensor<10x32xf32>'}}
  %0 = xlnet.lm_head %g, %emb, %bias : (tensor<10x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<2x5x64xf32>
  return
}

// -----

// embedding must be [V, D].
func.func @lm_head_embedding_rank(
    %g: tensor<2x5x32xf32>, %emb: tensor<64x32x1xf32>, %bias: tensor<64xf32>) {
  // expected-error @+1 {{'xlnet.lm_head' op 'embedding' must have rank 2 [V, D], got 'tensor<64x32x1xf32>'}}
  %0 = xlnet.lm_head %g, %emb, %bias : (tensor<2x5x32xf32>, tensor<64x32x1xf32>, tensor<64xf32>) -> tensor<2x5x64xf32>
  return
}

// -----

// bias must be [V].
func.func @lm_head_bias_rank(
    %g: tensor<2x5x32xf32>, %emb: tensor<64x32xf32>, %bias: tensor<1x64xf32>) {
  // expected-error @+1 {{'xlnet.lm_head' op 'bias' must have rank 1 [V], got 'tensor<1x64xf32>'}}
  %0 = xlnet.lm_head %g, %emb, %bias : (tensor<2x5x32xf32>, tensor<64x32xf32>, tensor<1x64xf32>) -> tensor<2x5x64xf32>
  return
}

// -----

// result must be [B, NP, V].
func.func @lm_head_result_rank(
    %g: tensor<2x5x32xf32>, %emb: tensor<64x32xf32>, %bias: tensor<64xf32>) {
  // expected-error @+1 {{'xlnet.lm_head' op 'result' must have rank 3 [B, NP, V], got 'tensor<10x64xf32>'}}
  %0 = xlnet.lm_head %g, %emb, %bias : (tensor<2x5x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<10x64xf32>
  return
}

// -----

// embedding D differs from g D.
func.func @lm_head_embedding_d_model(
    %g: tensor<2x5x32xf32>, %emb: tensor<64x16xf32>, %bias: tensor<64xf32>) {
  // expected-error @+1 {{'xlnet.lm_head' op D mismatch: 'embedding' dim 1 is 16 but 'g' dim 2 is 32}}
  %0 = xlnet.lm_head %g, %emb, %bias : (tensor<2x5x32xf32>, tensor<64x16xf32>, tensor<64xf32>) -> tensor<2x5x64xf32>
  return
}

// -----

// bias V differs from embedding V.
func.func @lm_head_bias_vocab(
    %g: tensor<2x5x32xf32>, %emb: tensor<64x32xf32>, %bias: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.lm_head' op V mismatch: 'bias' dim 0 is 32 but 'embedding' dim 0 is 64}}
  %0 = xlnet.lm_head %g, %emb, %bias : (tensor<2x5x32xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<2x5x64xf32>
  return
}

// -----

// result V differs from embedding V.
func.func @lm_head_result_vocab(
    %g: tensor<2x5x32xf32>, %emb: tensor<64x32xf32>, %bias: tensor<64xf32>) {
  // expected-error @+1 {{'xlnet.lm_head' op V mismatch: 'result' dim 2 is 32 but 'embedding' dim 0 is 64}}
  %0 = xlnet.lm_head %g, %emb, %bias : (tensor<2x5x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<2x5x32xf32>
  return
}

// -----

// result NP differs from g NP.
func.func @lm_head_result_num_predict(
    %g: tensor<2x5x32xf32>, %emb: tensor<64x32xf32>, %bias: tensor<64xf32>) {
  // expected-error @+1 {{'xlnet.lm_head' op NP mismatch: 'result' dim 1 is 16 but 'g' dim 1 is 5}}
  %0 = xlnet.lm_head %g, %emb, %bias : (tensor<2x5x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// lm_loss
//===----------------------------------------------------------------------===//

// logits must be [B, NP, V].
func.func @lm_loss_logits_rank(
    %logits: tensor<10x64xf32>, %target: tensor<2x5xi64>, %target_mask: tensor<2x5xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss' op 'logits' must have rank 3 [B, NP, V], got 'tensor<10x64xf32>'}}
  %0, %1 = xlnet.lm_loss %logits, %target, %target_mask : (tensor<10x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> (tensor<f32>, tensor<2x5xf32>)
  return
}

// -----

// target must be [B, NP].
func.func @lm_loss_target_rank(
    %logits: tensor<2x5x64xf32>, %target: tensor<10xi64>, %target_mask: tensor<2x5xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss' op 'target' must have rank 2 [B, NP], got 'tensor<10xi64>'}}
  %0, %1 = xlnet.lm_loss %logits, %target, %target_mask : (tensor<2x5x64xf32>, tensor<10xi64>, tensor<2x5xf32>) -> (tensor<f32>, tensor<2x5xf32>)
  return
}

// -----

// target_mask must be [B, NP].
func.func @lm_loss_target_mask_rank(
    %logits: tensor<2x5x64xf32>, %target: tensor<2x5xi64>, %target_mask: tensor<2x5x1xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss' op 'target_mask' must have rank 2 [B, NP], got 'tensor<2x5x1xf32>'}}
  %0, %1 = xlnet.lm_loss %logits, %target, %target_mask : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5x1xf32>) -> (tensor<f32>, tensor<2x5xf32>)
  return
}

// -----

// per_token_loss must be [B, NP].
func.func @lm_loss_per_token_loss_rank(
    %logits: tensor<2x5x64xf32>, %target: tensor<2x5xi64>, %target_mask: tensor<2x5xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss' op 'per_token_loss' must have rank 2 [B, NP], got 'tensor<10xf32>'}}
  %0, %1 = xlnet.lm_loss %logits, %target, %target_mask : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> (tensor<f32>, tensor<10xf32>)
  return
}

// -----

// target B differs from logits B.
func.func @lm_loss_target_batch(
    %logits: tensor<2x5x64xf32>, %target: tensor<4x5xi64>, %target_mask: tensor<2x5xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss' op B mismatch: 'target' dim 0 is 4 but 'logits' dim 0 is 2}}
  %0, %1 = xlnet.lm_loss %logits, %target, %target_mask : (tensor<2x5x64xf32>, tensor<4x5xi64>, tensor<2x5xf32>) -> (tensor<f32>, tensor<2x5xf32>)
  return
}

// -----

// target NP differs from logits NP.
func.func @lm_loss_target_num_predict(
    %logits: tensor<2x5x64xf32>, %target: tensor<2x4xi64>, %target_mask: tensor<2x5xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss' op NP mismatch: 'target' dim 1 is 4 but 'logits' dim 1 is 5}}
  %0, %1 = xlnet.lm_loss %logits, %target, %target_mask : (tensor<2x5x64xf32>, tensor<2x4xi64>, tensor<2x5xf32>) -> (tensor<f32>, tensor<2x5xf32>)
  return
}

// -----

// target_mask NP differs from logits NP.
func.func @lm_loss_target_mask_num_predict(
    %logits: tensor<2x5x64xf32>, %target: tensor<2x5xi64>, %target_mask: tensor<2x16xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss' op NP mismatch: 'target_mask' dim 1 is 16 but 'logits' dim 1 is 5}}
  %0, %1 = xlnet.lm_loss %logits, %target, %target_mask : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x16xf32>) -> (tensor<f32>, tensor<2x5xf32>)
  return
}

// -----

// per_token_loss B differs from logits B.
func.func @lm_loss_per_token_loss_batch(
    %logits: tensor<2x5x64xf32>, %target: tensor<2x5xi64>, %target_mask: tensor<2x5xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss' op B mismatch: 'per_token_loss' dim 0 is 1 but 'logits' dim 0 is 2}}
  %0, %1 = xlnet.lm_loss %logits, %target, %target_mask : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> (tensor<f32>, tensor<1x5xf32>)
  return
}

// -----

// loss must be a 0-d tensor (type constraint, before the verifier).
func.func @lm_loss_loss_not_scalar(
    %logits: tensor<2x5x64xf32>, %target: tensor<2x5xi64>, %target_mask: tensor<2x5xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0, %1 = xlnet.lm_loss %logits, %target, %target_mask : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> (tensor<1xf32>, tensor<2x5xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// two_stream_layer
//===----------------------------------------------------------------------===//

// h must be [B, S, D].
func.func @two_stream_layer_h_rank(
    %h: tensor<32x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'h' must have rank 3 [B, S, D], got 'tensor<32x32xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<32x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// g must be [B, NP, D].
func.func @two_stream_layer_g_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<10x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'g' must have rank 3 [B, NP, D], got 'tensor<10x32xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<10x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// mems must be time-major [M, B, D].
func.func @two_stream_layer_mems_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<16x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'mems' must have rank 3 [M, B, D], got 'tensor<16x32xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<16x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// pos_emb must be [P, R, D].
func.func @two_stream_layer_pos_emb_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'pos_emb' must have rank 3 [P, R, D], got 'tensor<40x32xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// seg_mat must be [B, S, K].
func.func @two_stream_layer_seg_mat_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'seg_mat' must have rank 3 [B, S, K], got 'tensor<16x24xi1>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// mask_h must be [B, S, K].
func.func @two_stream_layer_mask_h_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'mask_h' must have rank 3 [B, S, K], got 'tensor<16x24xi1>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// mask_g must be [B, S, K].
func.func @two_stream_layer_mask_g_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'mask_g' must have rank 3 [B, S, K], got 'tensor<16x24xi1>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// rows must be [B, NP].
func.func @two_stream_layer_rows_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<10xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'rows' must have rank 2 [B, NP], got 'tensor<10xi64>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<10xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// q_weight must be [D, N, H].
func.func @two_stream_layer_q_weight_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x32xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'q_weight' must have rank 3 [D, N, H], got 'tensor<32x32xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x32xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// r_weight must be [D, N, H].
func.func @two_stream_layer_r_weight_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x32xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'r_weight' must have rank 3 [D, N, H], got 'tensor<32x32xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x32xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// r_w_bias must be [N, H].
func.func @two_stream_layer_r_w_bias_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<32xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'r_w_bias' must have rank 2 [N, H], got 'tensor<32xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<32xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// seg_embed must be [2, N, H].
func.func @two_stream_layer_seg_embed_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x32xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'seg_embed' must have rank 3 [2, N, H], got 'tensor<2x32xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// attn_ln_weight must be [D].
func.func @two_stream_layer_attn_ln_weight_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<1x32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'attn_ln_weight' must have rank 1 [D], got 'tensor<1x32xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<1x32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// ff_w1 must be [I, D].
func.func @two_stream_layer_ff_w1_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<1536xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'ff_w1' must have rank 2 [I, D], got 'tensor<1536xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<1536xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// ff_b1 must be [I].
func.func @two_stream_layer_ff_b1_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<1x48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'ff_b1' must have rank 1 [I], got 'tensor<1x48xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<1x48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// ff_w2 must be [D, I].
func.func @two_stream_layer_ff_w2_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<1536xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'ff_w2' must have rank 2 [D, I], got 'tensor<1536xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<1536xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// ff_b2 must be [D].
func.func @two_stream_layer_ff_b2_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<1x32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'ff_b2' must have rank 1 [D], got 'tensor<1x32xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<1x32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// ff_ln_bias must be [D].
func.func @two_stream_layer_ff_ln_bias_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<1x32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'ff_ln_bias' must have rank 1 [D], got 'tensor<1x32xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<1x32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// h_out must be [B, S, D].
func.func @two_stream_layer_h_out_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'h_out' must have rank 3 [B, S, D], got 'tensor<32x32xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<32x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// g_out must be [B, NP, D].
func.func @two_stream_layer_g_out_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'g_out' must have rank 3 [B, NP, D], got 'tensor<10x32xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<10x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// new_mems must be time-major [L, B, D].
func.func @two_stream_layer_new_mems_rank(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'new_mems' must have rank 3 [L, B, D], got 'tensor<8x64xf32>'}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x64xf32>)
  return
}

// -----

// g B differs from h B.
func.func @two_stream_layer_g_batch(
    %h: tensor<2x16x32xf32>, %g: tensor<1x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op B mismatch: 'g' dim 0 is 1 but 'h' dim 0 is 2}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<1x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// g D differs from h D.
func.func @two_stream_layer_g_d_model(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x16xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op D mismatch: 'g' dim 2 is 16 but 'h' dim 2 is 32}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x16xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// mems B (dim 1) differs from h B.
func.func @two_stream_layer_mems_batch(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x4x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op B mismatch: 'mems' dim 1 is 4 but 'h' dim 0 is 2}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x4x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// pos_emb D differs from h D.
func.func @two_stream_layer_pos_emb_d_model(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op D mismatch: 'pos_emb' dim 2 is 16 but 'h' dim 2 is 32}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// seg_mat S differs from h S.
func.func @two_stream_layer_seg_mat_seq(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x8x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op S mismatch: 'seg_mat' dim 1 is 8 but 'h' dim 1 is 16}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x8x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// mask_h K differs from seg_mat K.
func.func @two_stream_layer_mask_h_klen(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x16xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op K mismatch: 'mask_h' dim 2 is 16 but 'seg_mat' dim 2 is 24}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x16xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// mask_g K differs from seg_mat K.
func.func @two_stream_layer_mask_g_klen(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x32xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op K mismatch: 'mask_g' dim 2 is 32 but 'seg_mat' dim 2 is 24}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x32xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// rows NP differs from g NP.
func.func @two_stream_layer_rows_num_predict(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x4xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op NP mismatch: 'rows' dim 1 is 4 but 'g' dim 1 is 5}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x4xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// k_weight D differs from h D.
func.func @two_stream_layer_k_weight_d_model(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<16x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op D mismatch: 'k_weight' dim 0 is 16 but 'h' dim 2 is 32}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<16x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// v_weight N differs from q_weight N.
func.func @two_stream_layer_v_weight_heads(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x4x8xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op N mismatch: 'v_weight' dim 1 is 4 but 'q_weight' dim 1 is 2}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x4x8xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// o_weight H differs from q_weight H.
func.func @two_stream_layer_o_weight_head_dim(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x8xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op H mismatch: 'o_weight' dim 2 is 8 but 'q_weight' dim 2 is 16}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x8xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// r_weight H differs from q_weight H.
func.func @two_stream_layer_r_weight_head_dim(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x32xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op H mismatch: 'r_weight' dim 2 is 32 but 'q_weight' dim 2 is 16}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x32xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// r_s_bias N differs from q_weight N.
func.func @two_stream_layer_r_s_bias_heads(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<4x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op N mismatch: 'r_s_bias' dim 0 is 4 but 'q_weight' dim 1 is 2}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<4x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// seg_embed dim 0 must be the literal 2.
func.func @two_stream_layer_seg_embed_dim0(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<3x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'seg_embed' dim 0 must be 2, got 3}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<3x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// attn_ln_bias D differs from h D.
func.func @two_stream_layer_attn_ln_bias_d_model(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<16xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op D mismatch: 'attn_ln_bias' dim 0 is 16 but 'h' dim 2 is 32}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<16xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// ff_b1 I differs from ff_w1 I.
func.func @two_stream_layer_ff_b1_inner(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<64xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op I mismatch: 'ff_b1' dim 0 is 64 but 'ff_w1' dim 0 is 48}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<64xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// ff_w2 I differs from ff_w1 I.
func.func @two_stream_layer_ff_w2_inner(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x64xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op I mismatch: 'ff_w2' dim 1 is 64 but 'ff_w1' dim 0 is 48}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x64xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// ff_ln_weight D differs from h D.
func.func @two_stream_layer_ff_ln_weight_d_model(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<48xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op D mismatch: 'ff_ln_weight' dim 0 is 48 but 'h' dim 2 is 32}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<48xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// h_out S differs from h S.
func.func @two_stream_layer_h_out_seq(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op S mismatch: 'h_out' dim 1 is 5 but 'h' dim 1 is 16}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x5x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// g_out NP differs from g NP.
func.func @two_stream_layer_g_out_num_predict(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op NP mismatch: 'g_out' dim 1 is 16 but 'g' dim 1 is 5}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// With mems, K must be M + S = 24.
func.func @two_stream_layer_klen_with_mems(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x32x32xf32>,
    %seg: tensor<2x16x16xi1>, %mask_h: tensor<2x16x16xi1>, %mask_g: tensor<2x16x16xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op K mismatch: 'seg_mat' dim 2 is 16 but M + S is 24}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x32x32xf32>,
         tensor<2x16x16xi1>, tensor<2x16x16xi1>, tensor<2x16x16xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// Without mems, K must be 0 + S = 16.
func.func @two_stream_layer_klen_without_mems(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %pos: tensor<1x40x32xf32>, %seg: tensor<2x16x24xi1>,
    %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>, %wq: tensor<32x2x16xf32>,
    %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>, %wr: tensor<32x2x16xf32>,
    %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>, %se: tensor<2x2x16xf32>,
    %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>,
    %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>, %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op K mismatch: 'seg_mat' dim 2 is 24 but M + S is 16}}
  %0:2 = xlnet.two_stream_layer h(%h) g(%g) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 0 : i64,
       reuse_len = 0 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<1x40x32xf32>, tensor<2x16x24xi1>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x2x16xf32>,
         tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>, tensor<48xf32>,
         tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>)
  return
}

// -----

// R must be K + S = 40.
func.func @two_stream_layer_rlen(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x24x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op R mismatch: 'pos_emb' dim 1 is 24 but K + S is 40}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x24x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// The FFN needs a nonlinearity: activation none is rejected.
func.func @two_stream_layer_activation_none(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op activation must be relu, gelu_tanh or gelu_erf}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation none>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// dropout must be in [0, 1).
func.func @two_stream_layer_dropout_one(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op dropout must be in [0, 1), got 1.000000e+00}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 1.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// dropatt must be in [0, 1).
func.func @two_stream_layer_dropatt_negative(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op dropatt must be in [0, 1), got -5.000000e-01}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = -0.5 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// mem_len > 0: the layer must return its memory.
func.func @two_stream_layer_missing_new_mems(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op mem_len > 0 requires a new_mems result}}
  %0:2 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>)
  return
}

// -----

// mem_len = 0: the layer can not return a memory.
func.func @two_stream_layer_unexpected_new_mems(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %pos: tensor<1x32x32xf32>, %seg: tensor<2x16x16xi1>,
    %mask_h: tensor<2x16x16xi1>, %mask_g: tensor<2x16x16xi1>, %rows: tensor<2x5xi64>, %wq: tensor<32x2x16xf32>,
    %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>, %wr: tensor<32x2x16xf32>,
    %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>, %se: tensor<2x2x16xf32>,
    %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>,
    %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>, %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op mem_len = 0 forbids a new_mems result}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 0 : i64,
       reuse_len = 0 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<1x32x32xf32>, tensor<2x16x16xi1>,
         tensor<2x16x16xi1>, tensor<2x16x16xi1>, tensor<2x5xi64>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x2x16xf32>,
         tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>, tensor<48xf32>,
         tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// Caching a memory needs reuse_len > 0.
func.func @two_stream_layer_reuse_len_zero(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op reuse_len must be > 0 when mem_len > 0}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 0 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

// new_mems B (dim 1) differs from h B.
func.func @two_stream_layer_new_mems_batch(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op B mismatch: 'new_mems' dim 1 is 1 but 'h' dim 0 is 2}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x1x32xf32>)
  return
}

// -----

// new_mems D differs from h D.
func.func @two_stream_layer_new_mems_d_model(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op D mismatch: 'new_mems' dim 2 is 16 but 'h' dim 2 is 32}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x16xf32>)
  return
}

// -----

// With mems, L = min(mem_len, M + reuse_len) = min(8, 16) = 8.
func.func @two_stream_layer_new_mems_len_with_mems(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op L mismatch: 'new_mems' dim 0 is 16 but min(mem_len, M + reuse_len) is 8}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<16x2x32xf32>)
  return
}

// -----

// Without mems, L = min(mem_len, 0 + reuse_len) = min(8, 4) = 4.
func.func @two_stream_layer_new_mems_len_without_mems(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %pos: tensor<1x32x32xf32>, %seg: tensor<2x16x16xi1>,
    %mask_h: tensor<2x16x16xi1>, %mask_g: tensor<2x16x16xi1>, %rows: tensor<2x5xi64>, %wq: tensor<32x2x16xf32>,
    %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>, %wr: tensor<32x2x16xf32>,
    %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>, %se: tensor<2x2x16xf32>,
    %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>,
    %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>, %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op L mismatch: 'new_mems' dim 0 is 8 but min(mem_len, M + reuse_len) is 4}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 4 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<1x32x32xf32>, tensor<2x16x16xi1>,
         tensor<2x16x16xi1>, tensor<2x16x16xi1>, tensor<2x5xi64>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x2x16xf32>,
         tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>, tensor<48xf32>,
         tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// gemm
//===----------------------------------------------------------------------===//

// k_rank must be at least 1.
func.func @gemm_k_rank_zero(%x: tensor<2x16x32xf32>, %w: tensor<32x48xf32>) {
  // expected-error @+1 {{'xlnet.gemm' op k_rank (0) must be >= 1 and below the ranks of x (3) and w (2)}}
  %0 = xlnet.gemm %x, %w {k_rank = 0 : i64} : (tensor<2x16x32xf32>, tensor<32x48xf32>) -> tensor<2x16x48xf32>
  return
}

// -----

// k_rank must be below the rank of x (x needs a leading dim).
func.func @gemm_k_rank_x(%x: tensor<2x16xf32>, %w: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.gemm' op k_rank (2) must be >= 1 and below the ranks of x (2) and w (3)}}
  %0 = xlnet.gemm %x, %w {k_rank = 2 : i64} : (tensor<2x16xf32>, tensor<2x16x32xf32>) -> tensor<32xf32>
  return
}

// -----

// k_rank must be below the rank of w (w needs an N dim).
func.func @gemm_k_rank_w(%x: tensor<2x2x16xf32>, %w: tensor<2x16xf32>) {
  // expected-error @+1 {{'xlnet.gemm' op k_rank (2) must be >= 1 and below the ranks of x (3) and w (2)}}
  %0 = xlnet.gemm %x, %w {k_rank = 2 : i64} : (tensor<2x2x16xf32>, tensor<2x16xf32>) -> tensor<2xf32>
  return
}

// -----

// Plain w is [K, N]: x K = 32 differs from w dim 0 = 48.
func.func @gemm_contraction(%x: tensor<2x16x32xf32>, %w: tensor<48x32xf32>) {
  // expected-error @+1 {{'xlnet.gemm' op contraction mismatch: 'x' dim 2 is 32 but 'w' dim 0 is 48}}
  %0 = xlnet.gemm %x, %w : (tensor<2x16x32xf32>, tensor<48x32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// With transpose_w, w is [N, K]: x K = 32 differs from w dim 1 = 48.
func.func @gemm_contraction_transpose_w(%x: tensor<2x16x32xf32>, %w: tensor<32x48xf32>) {
  // expected-error @+1 {{'xlnet.gemm' op contraction mismatch: 'x' dim 2 is 32 but 'w' dim 1 is 48}}
  %0 = xlnet.gemm %x, %w {transpose_w} : (tensor<2x16x32xf32>, tensor<32x48xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// k_rank = 2 contracts x dims 2 and 3 with w dims 1 and 2 (transpose_w): H differs.
func.func @gemm_contraction_k_rank_2(%x: tensor<2x16x2x16xf32>, %w: tensor<32x2x8xf32>) {
  // expected-error @+1 {{'xlnet.gemm' op contraction mismatch: 'x' dim 3 is 16 but 'w' dim 2 is 8}}
  %0 = xlnet.gemm %x, %w {k_rank = 2 : i64, transpose_w} : (tensor<2x16x2x16xf32>, tensor<32x2x8xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// The result has x's leading dims then w's N dims: rank 2 + 2 = 4.
func.func @gemm_result_rank(%x: tensor<2x16x32xf32>, %w: tensor<32x2x16xf32>) {
  // expected-error @+1 {{'xlnet.gemm' op result must have rank 4 (x's leading dims then w's N dims), got 'tensor<2x16x32xf32>'}}
  %0 = xlnet.gemm %x, %w : (tensor<2x16x32xf32>, tensor<32x2x16xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// result dim 1 must be x dim 1.
func.func @gemm_result_leading_dim(%x: tensor<2x16x32xf32>, %w: tensor<32x48xf32>) {
  // expected-error @+1 {{'xlnet.gemm' op result dim 1 is 5 but 'x' dim 1 is 16}}
  %0 = xlnet.gemm %x, %w : (tensor<2x16x32xf32>, tensor<32x48xf32>) -> tensor<2x5x48xf32>
  return
}

// -----

// result dim 3 must be w dim 2 (plain w: N dims last).
func.func @gemm_result_n_dim(%x: tensor<2x16x32xf32>, %w: tensor<32x2x16xf32>) {
  // expected-error @+1 {{'xlnet.gemm' op result dim 3 is 8 but 'w' dim 2 is 16}}
  %0 = xlnet.gemm %x, %w : (tensor<2x16x32xf32>, tensor<32x2x16xf32>) -> tensor<2x16x2x8xf32>
  return
}

// -----

// With transpose_w the N dims come first in w: result dim 2 must be w dim 0.
func.func @gemm_result_n_dim_transpose_w(%x: tensor<2x16x32xf32>, %w: tensor<48x32xf32>) {
  // expected-error @+1 {{'xlnet.gemm' op result dim 2 is 32 but 'w' dim 0 is 48}}
  %0 = xlnet.gemm %x, %w {transpose_w} : (tensor<2x16x32xf32>, tensor<48x32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// bias must have N = 48 elements.
func.func @gemm_bias_width(%x: tensor<2x16x32xf32>, %w: tensor<48x32xf32>, %b: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.gemm' op bias has 32 elements but the output width N is 48}}
  %0 = xlnet.gemm %x, %w bias %b {activation = #xlnet<activation relu>, transpose_w} : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<32xf32>) -> tensor<2x16x48xf32>
  return
}

// -----

// With two N dims, N = 2 * 16 = 32 elements.
func.func @gemm_bias_width_multi_dim_n(
    %x: tensor<2x16x32xf32>, %w: tensor<32x2x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'xlnet.gemm' op bias has 16 elements but the output width N is 32}}
  %0 = xlnet.gemm %x, %w bias %b : (tensor<2x16x32xf32>, tensor<32x2x16xf32>, tensor<16xf32>) -> tensor<2x16x2x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// add_layer_norm
//===----------------------------------------------------------------------===//

// x needs a last dim to normalize over.
func.func @add_layer_norm_scalar(
    %x: tensor<f32>, %res: tensor<f32>, %gamma: tensor<32xf32>, %beta: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm' op 'x' must have rank >= 1}}
  %0 = xlnet.add_layer_norm %x, %res, %gamma, %beta eps = 9.9999999999999998E-13 : (tensor<f32>, tensor<f32>, tensor<32xf32>, tensor<32xf32>) -> tensor<f32>
  return
}

// -----

// residual must have the type of x.
func.func @add_layer_norm_residual_type(
    %x: tensor<2x16x32xf32>, %res: tensor<2x5x32xf32>, %gamma: tensor<32xf32>, %beta: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm' op 'residual' ('tensor<2x5x32xf32>') and result ('tensor<2x16x32xf32>') must have the type of 'x' ('tensor<2x16x32xf32>')}}
  %0 = xlnet.add_layer_norm %x, %res, %gamma, %beta eps = 9.9999999999999998E-13 : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// result must have the type of x.
func.func @add_layer_norm_result_type(
    %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<32xf32>, %beta: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm' op 'residual' ('tensor<2x16x32xf32>') and result ('tensor<2x16x16xf32>') must have the type of 'x' ('tensor<2x16x32xf32>')}}
  %0 = xlnet.add_layer_norm %x, %res, %gamma, %beta eps = 9.9999999999999998E-13 : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x16xf32>
  return
}

// -----

// gamma must be 1-d.
func.func @add_layer_norm_gamma_rank(
    %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<1x32xf32>, %beta: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm' op 'gamma' must be [D] with D = 'x' dim 2 (32), got 'tensor<1x32xf32>'}}
  %0 = xlnet.add_layer_norm %x, %res, %gamma, %beta eps = 9.9999999999999998E-13 : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<1x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// gamma must have D = 32 elements.
func.func @add_layer_norm_gamma_size(
    %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<16xf32>, %beta: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm' op 'gamma' must be [D] with D = 'x' dim 2 (32), got 'tensor<16xf32>'}}
  %0 = xlnet.add_layer_norm %x, %res, %gamma, %beta eps = 9.9999999999999998E-13 : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<16xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// beta must have D = 32 elements.
func.func @add_layer_norm_beta_size(
    %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<32xf32>, %beta: tensor<64xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm' op 'beta' must be [D] with D = 'x' dim 2 (32), got 'tensor<64xf32>'}}
  %0 = xlnet.add_layer_norm %x, %res, %gamma, %beta eps = 9.9999999999999998E-13 : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>, tensor<64xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// eps must be positive: 0 is rejected.
func.func @add_layer_norm_eps_zero(
    %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<32xf32>, %beta: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm' op eps must be > 0}}
  %0 = xlnet.add_layer_norm %x, %res, %gamma, %beta eps = 0.000000e+00 : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// eps must be positive: a negative eps is rejected.
func.func @add_layer_norm_eps_negative(
    %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<32xf32>, %beta: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm' op eps must be > 0}}
  %0 = xlnet.add_layer_norm %x, %res, %gamma, %beta eps = -1.000000e-05 : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dropout
//===----------------------------------------------------------------------===//

// rate must be below 1 (rate 1 would divide by zero).
func.func @dropout_rate_one(%x: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.dropout' op rate must be in [0, 1), got 1.000000e+00}}
  %0 = xlnet.dropout %x rate = 1.000000e+00 : tensor<2x16x32xf32>
  return
}

// -----

// rate can not be negative.
func.func @dropout_rate_negative(%x: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.dropout' op rate must be in [0, 1), got -1.000000e-01}}
  %0 = xlnet.dropout %x rate = -1.000000e-01 : tensor<2x16x32xf32>
  return
}

// -----

// Operand and result have one type (SameOperandsAndResultType; generic form).
func.func @dropout_type_mismatch(%x: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.dropout' op requires the same type for all operands and results}}
  %0 = "xlnet.dropout"(%x) <{rate = 1.000000e-01 : f64}> : (tensor<2x16x32xf32>) -> tensor<2x16x16xf32>
  return
}

// -----

// A negative klen is not mistaken for a huge unsigned one.
func.func @rel_pos_encoding_negative_klen() {
  // expected-error @+1 {{'xlnet.rel_pos_encoding' op klen (-1) must be >= qlen (16)}}
  %0 = xlnet.rel_pos_encoding klen = -1 qlen = 16 clamp_len = -1 : tensor<1x24x32xf32>
  return
}


// -----

// A negative qlen is reported as such.
func.func @rel_pos_encoding_negative_qlen() {
  // expected-error @+1 {{'xlnet.rel_pos_encoding' op qlen must be > 0, got -1}}
  %0 = xlnet.rel_pos_encoding klen = 24 qlen = -1 clamp_len = -1 : tensor<1x24x32xf32>
  return
}


// -----

// A negative mem_len is rejected, not read as unsigned.
func.func @mem_cache_negative_mem_len(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op reuse_len and mem_len must be > 0, got 8 and -1}}
  %0 = "xlnet.mem_cache"(%mems, %h) <{mem_len = -1 : i64, reuse_len = 8 : i64}> : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<8x2x32xf32>
  return
}


// -----

// A negative reuse_len is rejected.
func.func @mem_cache_negative_reuse_len(%mems: tensor<8x2x32xf32>, %h: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_cache' op reuse_len and mem_len must be > 0, got -1 and 8}}
  %0 = "xlnet.mem_cache"(%mems, %h) <{mem_len = 8 : i64, reuse_len = -1 : i64}> : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<8x2x32xf32>
  return
}


// -----

// A negative mem_len is rejected.
func.func @two_stream_layer_negative_mem_len(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op mem_len must be >= 0, got -1}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = -1 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}


// -----

// reuse_len cannot exceed the segment (mem_cache would reject it after decomposition).
func.func @two_stream_layer_reuse_len_gt_seq(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op reuse_len (20) exceeds the segment length S (16)}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 20 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}


// -----

// pos_emb has 1 or 2 positional copies (rel_attention would reject 3).
func.func @two_stream_layer_three_copies(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<3x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op 'pos_emb' dim 0 (3 positional copies) must be 1 or 2 and divide the batch size B (2)}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<3x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}


// -----

// LayerNorm epsilon must be positive.
func.func @two_stream_layer_eps_negative(
    %h: tensor<2x16x32xf32>, %g: tensor<2x5x32xf32>, %mems: tensor<8x2x32xf32>, %pos: tensor<1x40x32xf32>,
    %seg: tensor<2x16x24xi1>, %mask_h: tensor<2x16x24xi1>, %mask_g: tensor<2x16x24xi1>, %rows: tensor<2x5xi64>,
    %wq: tensor<32x2x16xf32>, %wk: tensor<32x2x16xf32>, %wv: tensor<32x2x16xf32>, %wo: tensor<32x2x16xf32>,
    %wr: tensor<32x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %se: tensor<2x2x16xf32>, %aw: tensor<32xf32>, %ab: tensor<32xf32>, %w1: tensor<48x32xf32>,
    %b1: tensor<48xf32>, %w2: tensor<32x48xf32>, %b2: tensor<32xf32>, %fw: tensor<32xf32>,
    %fb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.two_stream_layer' op eps must be > 0, got -1.000000e+00}}
  %0:3 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
      seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
      attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
      attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
      {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
       dropout = 0.0 : f64, eps = -1.0 : f64, mem_len = 8 : i64,
       reuse_len = 8 : i64}
      : (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>, tensor<1x40x32xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<2x5xi64>,
         tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>, tensor<32x2x16xf32>,
         tensor<32x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x2x16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<48x32xf32>,
         tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>,
         tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
  return
}


// -----

// LayerNorm epsilon must be positive.
func.func @post_attention_eps_negative(
    %attn: tensor<2x16x2x16xf32>, %res_in: tensor<2x16x32xf32>, %wo: tensor<32x2x16xf32>, %lnw: tensor<32xf32>,
    %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.post_attention' op eps must be > 0, got -1.000000e+00}}
  %0 = xlnet.post_attention %attn residual %res_in weight %wo layer_norm(%lnw, %lnb)
      eps = -1.0 dropout = 0.0
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<32x2x16xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}


// -----

// LayerNorm epsilon must be positive.
func.func @ffn_eps_zero(
    %x: tensor<2x16x32xf32>, %w1: tensor<48x32xf32>, %b1: tensor<48xf32>, %w2: tensor<32x48xf32>,
    %b2: tensor<32xf32>, %lnw: tensor<32xf32>, %lnb: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.ffn' op eps must be > 0, got 0.000000e+00}}
  %0 = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%lnw, %lnb)
      activation = relu eps = 0.0 dropout = 0.0
      : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>, tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}


// -----

// NaN is not a rate.
func.func @dropout_rate_nan(%x: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.dropout' op rate must be in [0, 1), got nan}}
  %0 = xlnet.dropout %x rate = 0x7FF8000000000000 : tensor<2x16x32xf32>
  return
}


// -----

// NaN is not an epsilon.
func.func @add_layer_norm_eps_nan(
    %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<32xf32>, %beta: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm' op eps must be > 0, got nan}}
  %0 = xlnet.add_layer_norm %x, %res, %gamma, %beta eps = 0x7FF8000000000000 : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return
}


// -----

// NaN is not a scale.
func.func @rel_attention_scale_nan(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op scale must be > 0, got nan}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 0x7FF8000000000000 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}


// -----

// The bias is a vector of N elements.
func.func @gemm_bias_rank(%x: tensor<2x16x32xf32>, %w: tensor<48x32xf32>, %b: tensor<6x8xf32>) {
  // expected-error @+1 {{'xlnet.gemm' op bias must have rank 1 [N], got 'tensor<6x8xf32>'}}
  %0 = xlnet.gemm %x, %w bias %b {activation = #xlnet<activation relu>, transpose_w} : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<6x8xf32>) -> tensor<2x16x48xf32>
  return
}


// -----

// Keys are [mems ; h]: K < S would mean a negative memory length.
func.func @rel_attention_klen_lt_qlen(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x8x2x16xf32>, %v: tensor<2x8x2x16xf32>, %kr: tensor<1x24x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x8xi1>, %mask: tensor<2x16x8xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op K (klen, 'k' dim 1) is 8 but must be >= S (qlen, 'mask' dim 1) = 16}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>, tensor<1x24x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x8xi1>, tensor<2x16x8xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dropout and rel_attention: site
//===----------------------------------------------------------------------===//

// A dropout site numbers a random stream: it can not be negative.
func.func @dropout_site_negative(%x: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.dropout' op site must be >= 0, got -1}}
  %0 = xlnet.dropout %x rate = 1.000000e-01 {site = -1 : i64} : tensor<2x16x32xf32>
  return
}

// -----

// The dropatt site of rel_attention can not be negative either.
func.func @rel_attention_site_negative(
    %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>,
    %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>, %rs: tensor<2x16xf32>,
    %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention' op site must be >= 0, got -3}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 1.000000e-01 {site = -3 : i64}
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> tensor<2x16x2x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// embedding_grad
//===----------------------------------------------------------------------===//

// ids must be [B, S].
func.func @embedding_grad_ids_rank(%ids: tensor<32xi64>, %dout: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.embedding_grad' op 'ids' must have rank 2 [B, S], got 'tensor<32xi64>'}}
  %0 = xlnet.embedding_grad %ids, %dout : (tensor<32xi64>, tensor<2x16x32xf32>) -> tensor<64x32xf32>
  return
}

// -----

// dout must be [B, S, D].
func.func @embedding_grad_dout_rank(%ids: tensor<2x16xi64>, %dout: tensor<32x32xf32>) {
  // expected-error @+1 {{'xlnet.embedding_grad' op 'dout' must have rank 3 [B, S, D], got 'tensor<32x32xf32>'}}
  %0 = xlnet.embedding_grad %ids, %dout : (tensor<2x16xi64>, tensor<32x32xf32>) -> tensor<64x32xf32>
  return
}

// -----

// result (the table gradient) must be [V, D].
func.func @embedding_grad_result_rank(%ids: tensor<2x16xi64>, %dout: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.embedding_grad' op 'result' must have rank 2 [V, D], got 'tensor<64x32x1xf32>'}}
  %0 = xlnet.embedding_grad %ids, %dout : (tensor<2x16xi64>, tensor<2x16x32xf32>) -> tensor<64x32x1xf32>
  return
}

// -----

// dout B differs from ids B.
func.func @embedding_grad_batch(%ids: tensor<2x16xi64>, %dout: tensor<4x16x32xf32>) {
  // expected-error @+1 {{'xlnet.embedding_grad' op B mismatch: 'dout' dim 0 is 4 but 'ids' dim 0 is 2}}
  %0 = xlnet.embedding_grad %ids, %dout : (tensor<2x16xi64>, tensor<4x16x32xf32>) -> tensor<64x32xf32>
  return
}

// -----

// dout S differs from ids S.
func.func @embedding_grad_seq(%ids: tensor<2x16xi64>, %dout: tensor<2x8x32xf32>) {
  // expected-error @+1 {{'xlnet.embedding_grad' op S mismatch: 'dout' dim 1 is 8 but 'ids' dim 1 is 16}}
  %0 = xlnet.embedding_grad %ids, %dout : (tensor<2x16xi64>, tensor<2x8x32xf32>) -> tensor<64x32xf32>
  return
}

// -----

// result D differs from dout D.
func.func @embedding_grad_d_model(%ids: tensor<2x16xi64>, %dout: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.embedding_grad' op D mismatch: 'result' dim 1 is 16 but 'dout' dim 2 is 32}}
  %0 = xlnet.embedding_grad %ids, %dout : (tensor<2x16xi64>, tensor<2x16x32xf32>) -> tensor<64x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// mask_embedding_grad
//===----------------------------------------------------------------------===//

// dout must be [B, NP, D].
func.func @mask_embedding_grad_dout_rank(%dout: tensor<10x32xf32>) {
  // expected-error @+1 {{'xlnet.mask_embedding_grad' op 'dout' must have rank 3 [B, NP, D], got 'tensor<10x32xf32>'}}
  %0 = xlnet.mask_embedding_grad %dout : (tensor<10x32xf32>) -> tensor<1x1x32xf32>
  return
}

// -----

// result must be [1, 1, D].
func.func @mask_embedding_grad_result_rank(%dout: tensor<2x5x32xf32>) {
  // expected-error @+1 {{'xlnet.mask_embedding_grad' op 'result' must have rank 3 [1, 1, D], got 'tensor<32xf32>'}}
  %0 = xlnet.mask_embedding_grad %dout : (tensor<2x5x32xf32>) -> tensor<32xf32>
  return
}

// -----

// result dim 0 must be the literal 1.
func.func @mask_embedding_grad_dim0(%dout: tensor<2x5x32xf32>) {
  // expected-error @+1 {{'xlnet.mask_embedding_grad' op 'result' dim 0 must be 1, got 2}}
  %0 = xlnet.mask_embedding_grad %dout : (tensor<2x5x32xf32>) -> tensor<2x1x32xf32>
  return
}

// -----

// result dim 1 must be the literal 1.
func.func @mask_embedding_grad_dim1(%dout: tensor<2x5x32xf32>) {
  // expected-error @+1 {{'xlnet.mask_embedding_grad' op 'result' dim 1 must be 1, got 5}}
  %0 = xlnet.mask_embedding_grad %dout : (tensor<2x5x32xf32>) -> tensor<1x5x32xf32>
  return
}

// -----

// result D differs from dout D.
func.func @mask_embedding_grad_d_model(%dout: tensor<2x5x32xf32>) {
  // expected-error @+1 {{'xlnet.mask_embedding_grad' op D mismatch: 'result' dim 2 is 16 but 'dout' dim 2 is 32}}
  %0 = xlnet.mask_embedding_grad %dout : (tensor<2x5x32xf32>) -> tensor<1x1x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// mem_concat_grad
//===----------------------------------------------------------------------===//

// dout must be [B, K, D].
func.func @mem_concat_grad_dout_rank(%dout: tensor<48x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_concat_grad' op 'dout' must have rank 3 [B, K, D], got 'tensor<48x32xf32>'}}
  %0 = xlnet.mem_concat_grad %dout : (tensor<48x32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

// result must be [B, S, D].
func.func @mem_concat_grad_result_rank(%dout: tensor<2x24x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_concat_grad' op 'result' must have rank 3 [B, S, D], got 'tensor<2x16x32x1xf32>'}}
  %0 = xlnet.mem_concat_grad %dout : (tensor<2x24x32xf32>) -> tensor<2x16x32x1xf32>
  return
}

// -----

// result B differs from dout B.
func.func @mem_concat_grad_batch(%dout: tensor<2x24x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_concat_grad' op B mismatch: 'result' dim 0 is 1 but 'dout' dim 0 is 2}}
  %0 = xlnet.mem_concat_grad %dout : (tensor<2x24x32xf32>) -> tensor<1x16x32xf32>
  return
}

// -----

// result D differs from dout D.
func.func @mem_concat_grad_d_model(%dout: tensor<2x24x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_concat_grad' op D mismatch: 'result' dim 2 is 16 but 'dout' dim 2 is 32}}
  %0 = xlnet.mem_concat_grad %dout : (tensor<2x24x32xf32>) -> tensor<2x16x16xf32>
  return
}

// -----

// The result is the last S of the K = M + S key rows: K < S is impossible.
func.func @mem_concat_grad_klen_lt_qlen(%dout: tensor<2x8x32xf32>) {
  // expected-error @+1 {{'xlnet.mem_concat_grad' op K ('dout' dim 1) is 8 but must be >= S ('result' dim 1) = 16}}
  %0 = xlnet.mem_concat_grad %dout : (tensor<2x8x32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// activation
//===----------------------------------------------------------------------===//

// Operand and result have one type (SameOperandsAndResultType; generic form).
func.func @activation_type_mismatch(%z: tensor<2x16x48xf32>) {
  // expected-error @+1 {{'xlnet.activation' op requires the same type for all operands and results}}
  %0 = "xlnet.activation"(%z) <{activation = #xlnet<activation relu>}> : (tensor<2x16x48xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// activation_grad
//===----------------------------------------------------------------------===//

// activation none has no gradient op: its gradient is dy itself.
func.func @activation_grad_none(%dy: tensor<2x16x48xf32>, %z: tensor<2x16x48xf32>) {
  // expected-error @+1 {{'xlnet.activation_grad' op activation 'none' has no gradient op (the gradient is dy itself)}}
  %0 = xlnet.activation_grad none %dy, %z : tensor<2x16x48xf32>
  return
}

// -----

// dy, the pre-activation x and the result have one type (generic form).
func.func @activation_grad_type_mismatch(%dy: tensor<2x16x48xf32>, %z: tensor<2x16x32xf32>) {
  // expected-error @+1 {{'xlnet.activation_grad' op requires the same type for all operands and results}}
  %0 = "xlnet.activation_grad"(%dy, %z) <{activation = #xlnet<activation relu>}> : (tensor<2x16x48xf32>, tensor<2x16x32xf32>) -> tensor<2x16x48xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gemm_wgrad
//===----------------------------------------------------------------------===//

// k_rank must be at least 1.
func.func @gemm_wgrad_k_rank_zero(%x: tensor<2x16x32xf32>, %dy: tensor<2x16x48xf32>) {
  // expected-error @+1 {{'xlnet.gemm_wgrad' op k_rank (0) must be >= 1 and below the ranks of x (3) and result (2)}}
  %0 = xlnet.gemm_wgrad %x, %dy {k_rank = 0 : i64} : (tensor<2x16x32xf32>, tensor<2x16x48xf32>) -> tensor<32x48xf32>
  return
}

// -----

// k_rank must be below the rank of x (x needs a leading dim).
func.func @gemm_wgrad_k_rank_x(%x: tensor<16x32xf32>, %dy: tensor<16x48xf32>) {
  // expected-error @+1 {{'xlnet.gemm_wgrad' op k_rank (2) must be >= 1 and below the ranks of x (2) and result (3)}}
  %0 = xlnet.gemm_wgrad %x, %dy {k_rank = 2 : i64} : (tensor<16x32xf32>, tensor<16x48xf32>) -> tensor<16x32x48xf32>
  return
}

// -----

// k_rank must be below the rank of the result (the weight needs an N dim).
func.func @gemm_wgrad_k_rank_result(%x: tensor<2x16x2x16xf32>, %dy: tensor<2x16xf32>) {
  // expected-error @+1 {{'xlnet.gemm_wgrad' op k_rank (2) must be >= 1 and below the ranks of x (4) and result (2)}}
  %0 = xlnet.gemm_wgrad %x, %dy {k_rank = 2 : i64} : (tensor<2x16x2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  return
}

// -----

// Plain w is [K, N]: x K = 32 differs from result dim 0 = 48.
func.func @gemm_wgrad_contraction(%x: tensor<2x16x32xf32>, %dy: tensor<2x16x48xf32>) {
  // expected-error @+1 {{'xlnet.gemm_wgrad' op contraction mismatch: 'x' dim 2 is 32 but 'result' dim 0 is 48}}
  %0 = xlnet.gemm_wgrad %x, %dy : (tensor<2x16x32xf32>, tensor<2x16x48xf32>) -> tensor<48x48xf32>
  return
}

// -----

// With transpose_w, w is [N, K]: x K = 32 differs from result dim 1 = 48.
func.func @gemm_wgrad_contraction_transpose_w(%x: tensor<2x16x32xf32>, %dy: tensor<2x16x48xf32>) {
  // expected-error @+1 {{'xlnet.gemm_wgrad' op contraction mismatch: 'x' dim 2 is 32 but 'result' dim 1 is 48}}
  %0 = xlnet.gemm_wgrad %x, %dy {transpose_w} : (tensor<2x16x32xf32>, tensor<2x16x48xf32>) -> tensor<32x48xf32>
  return
}

// -----

// dy has x's leading dims then the weight's N dims: rank 2 + 1 = 3.
func.func @gemm_wgrad_dy_rank(%x: tensor<2x16x32xf32>, %dy: tensor<32x48xf32>) {
  // expected-error @+1 {{'xlnet.gemm_wgrad' op 'dy' must have rank 3 (x's leading dims then result's N dims), got 'tensor<32x48xf32>'}}
  %0 = xlnet.gemm_wgrad %x, %dy : (tensor<2x16x32xf32>, tensor<32x48xf32>) -> tensor<32x48xf32>
  return
}

// -----

// dy dim 1 must be x dim 1.
func.func @gemm_wgrad_dy_leading_dim(%x: tensor<2x16x32xf32>, %dy: tensor<2x5x48xf32>) {
  // expected-error @+1 {{'xlnet.gemm_wgrad' op 'dy' dim 1 is 5 but 'x' dim 1 is 16}}
  %0 = xlnet.gemm_wgrad %x, %dy : (tensor<2x16x32xf32>, tensor<2x5x48xf32>) -> tensor<32x48xf32>
  return
}

// -----

// dy dim 2 must be the result's N dim (plain w: result dim 1).
func.func @gemm_wgrad_dy_n_dim(%x: tensor<2x16x32xf32>, %dy: tensor<2x16x48xf32>) {
  // expected-error @+1 {{'xlnet.gemm_wgrad' op 'dy' dim 2 is 48 but 'result' dim 1 is 64}}
  %0 = xlnet.gemm_wgrad %x, %dy : (tensor<2x16x32xf32>, tensor<2x16x48xf32>) -> tensor<32x64xf32>
  return
}

// -----

// With transpose_w the N dims come first: dy dim 2 must be result dim 0.
func.func @gemm_wgrad_dy_n_dim_transpose_w(%x: tensor<2x16x32xf32>, %dy: tensor<2x16x48xf32>) {
  // expected-error @+1 {{'xlnet.gemm_wgrad' op 'dy' dim 2 is 48 but 'result' dim 0 is 64}}
  %0 = xlnet.gemm_wgrad %x, %dy {transpose_w} : (tensor<2x16x32xf32>, tensor<2x16x48xf32>) -> tensor<64x32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// bias_grad
//===----------------------------------------------------------------------===//

// The bias gradient is a vector [N].
func.func @bias_grad_result_rank(%dy: tensor<2x16x48xf32>) {
  // expected-error @+1 {{'xlnet.bias_grad' op result must have rank 1 [N], got 'tensor<1x48xf32>'}}
  %0 = xlnet.bias_grad %dy : (tensor<2x16x48xf32>) -> tensor<1x48xf32>
  return
}

// -----

// dy can not be a scalar.
func.func @bias_grad_dy_scalar(%dy: tensor<f32>) {
  // expected-error @+1 {{'xlnet.bias_grad' op 'dy' must have rank >= 1, got 'tensor<f32>'}}
  %0 = xlnet.bias_grad %dy : (tensor<f32>) -> tensor<1xf32>
  return
}

// -----

// N = 32 is not dy's last dim (48).
func.func @bias_grad_width(%dy: tensor<2x16x48xf32>) {
  // expected-error @+1 {{'xlnet.bias_grad' op result has 32 elements, which is not the product of trailing dims of 'dy' 'tensor<2x16x48xf32>'}}
  %0 = xlnet.bias_grad %dy : (tensor<2x16x48xf32>) -> tensor<32xf32>
  return
}

// -----

// N = 96 lies between 48 and 16 * 48: not the product of a suffix of dy's dims.
func.func @bias_grad_width_multi_dim(%dy: tensor<2x16x48xf32>) {
  // expected-error @+1 {{'xlnet.bias_grad' op result has 96 elements, which is not the product of trailing dims of 'dy' 'tensor<2x16x48xf32>'}}
  %0 = xlnet.bias_grad %dy : (tensor<2x16x48xf32>) -> tensor<96xf32>
  return
}

// -----

// One element is not a suffix product either (the empty suffix does not count).
func.func @bias_grad_width_one(%dy: tensor<2x16x48xf32>) {
  // expected-error @+1 {{'xlnet.bias_grad' op result has 1 elements, which is not the product of trailing dims of 'dy' 'tensor<2x16x48xf32>'}}
  %0 = xlnet.bias_grad %dy : (tensor<2x16x48xf32>) -> tensor<1xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// rel_attention_grad
//===----------------------------------------------------------------------===//

// dout must be [B, T, N, H].
func.func @rel_attention_grad_dout_rank(
    %dout: tensor<2x16x32xf32>, %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op 'dout' must have rank 4 [B, T, N, H], got 'tensor<2x16x32xf32>'}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// dout T differs from q T (dout is bound after the forward operands).
func.func @rel_attention_grad_dout_rows(
    %dout: tensor<2x5x2x16xf32>, %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op T mismatch: 'dout' dim 1 is 5 but 'q' dim 1 is 16}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x5x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// The forward operand rules apply: q must be [B, T, N, H].
func.func @rel_attention_grad_q_rank(
    %dout: tensor<2x16x2x16xf32>, %q: tensor<2x16x32xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op 'q' must have rank 4 [B, T, N, H], got 'tensor<2x16x32xf32>'}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> (tensor<2x16x32xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// The forward operand rules apply: k H differs from q H.
func.func @rel_attention_grad_k_head_dim(
    %dout: tensor<2x16x2x16xf32>, %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x8xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op H mismatch: 'k' dim 3 is 8 but 'q' dim 3 is 16}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x8xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> (tensor<2x16x2x16xf32>, tensor<2x24x2x8xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// k_r must span R = K + S = 40 relative positions.
func.func @rel_attention_grad_rlen(
    %dout: tensor<2x16x2x16xf32>, %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<1x32x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op R mismatch: 'k_r' dim 1 is 32 but K + S is 40}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x32x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x32x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// Without rows every position is a query row: T must be S.
func.func @rel_attention_grad_no_rows_t(
    %dout: tensor<2x5x2x16xf32>, %q: tensor<2x5x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op T mismatch: 'q' dim 1 is 5 but S (no rows given) is 16}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x5x2x16xf32>, tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// rows [B, T]: its B differs from q B.
func.func @rel_attention_grad_rows_batch(
    %dout: tensor<2x5x2x16xf32>, %q: tensor<2x5x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>, %rows: tensor<3x5xi64>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op B mismatch: 'rows' dim 0 is 3 but 'q' dim 0 is 2}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask) rows(%rows)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x5x2x16xf32>, tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>, tensor<3x5xi64>)
      -> (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// k_r has 1 or 2 positional copies dividing B.
func.func @rel_attention_grad_three_copies(
    %dout: tensor<2x16x2x16xf32>, %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<3x40x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op 'k_r' dim 0 (3 positional copies) must be 1 or 2 and divide the batch size B (2)}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<3x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<3x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// Keys are [mems ; h]: K < S would mean a negative memory length.
func.func @rel_attention_grad_klen_lt_qlen(
    %dout: tensor<2x16x2x16xf32>, %q: tensor<2x16x2x16xf32>, %k: tensor<2x8x2x16xf32>, %v: tensor<2x8x2x16xf32>,
    %kr: tensor<1x24x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x8xi1>, %mask: tensor<2x16x8xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op K (klen, 'k' dim 1) is 8 but must be >= S (qlen, 'mask' dim 1) = 16}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>,
         tensor<1x24x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x8xi1>, tensor<2x16x8xi1>)
      -> (tensor<2x16x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>, tensor<1x24x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// scale must be positive.
func.func @rel_attention_grad_scale_zero(
    %dout: tensor<2x16x2x16xf32>, %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op scale must be > 0, got 0.000000e+00}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 0.000000e+00 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// dropatt is a rate in [0, 1).
func.func @rel_attention_grad_dropatt_one(
    %dout: tensor<2x16x2x16xf32>, %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op dropatt must be in [0, 1), got 1.000000e+00}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 1.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// The dropatt site (the forward's) can not be negative.
func.func @rel_attention_grad_site_negative(
    %dout: tensor<2x16x2x16xf32>, %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op site must be >= 0, got -1}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 1.000000e-01 {site = -1 : i64}
      : (tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// dq must have the type of q.
func.func @rel_attention_grad_dq_type(
    %dout: tensor<2x16x2x16xf32>, %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op result 0 ('tensor<2x16x2x8xf32>') must have the type of its operand ('tensor<2x16x2x16xf32>')}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> (tensor<2x16x2x8xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// dk_r must have the type of k_r (one positional copy here, not two).
func.func @rel_attention_grad_dk_r_type(
    %dout: tensor<2x16x2x16xf32>, %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op result 3 ('tensor<2x40x2x16xf32>') must have the type of its operand ('tensor<1x40x2x16xf32>')}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  return
}

// -----

// dr_s_bias must have the type of r_s_bias.
func.func @rel_attention_grad_dr_s_bias_type(
    %dout: tensor<2x16x2x16xf32>, %q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>, %v: tensor<2x24x2x16xf32>,
    %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>, %rw: tensor<2x16xf32>, %rr: tensor<2x16xf32>,
    %rs: tensor<2x16xf32>, %seg: tensor<2x16x24xi1>, %mask: tensor<2x16x24xi1>) {
  // expected-error @+1 {{'xlnet.rel_attention_grad' op result 7 ('tensor<32xf32>') must have the type of its operand ('tensor<2x16xf32>')}}
  %0:8 = xlnet.rel_attention_grad dout(%dout) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
      biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask)
      scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xf32>, tensor<2x16x24xi1>, tensor<2x16x24xi1>)
      -> (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
          tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<32xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// add_layer_norm_grad
//===----------------------------------------------------------------------===//

// x needs a last dim to normalize over.
func.func @add_layer_norm_grad_scalar(
    %dout: tensor<f32>, %x: tensor<f32>, %res: tensor<f32>, %gamma: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm_grad' op 'x' must have rank >= 1, got 'tensor<f32>'}}
  %0:3 = xlnet.add_layer_norm_grad %dout, %x, %res, %gamma eps = 9.9999999999999998E-13
      : (tensor<f32>, tensor<f32>, tensor<f32>, tensor<32xf32>)
      -> (tensor<f32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// dout must have the type of x.
func.func @add_layer_norm_grad_dout_type(
    %dout: tensor<2x5x32xf32>, %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm_grad' op 'dout' ('tensor<2x5x32xf32>'), 'residual' ('tensor<2x16x32xf32>') and 'dsum' ('tensor<2x16x32xf32>') must have the type of 'x' ('tensor<2x16x32xf32>')}}
  %0:3 = xlnet.add_layer_norm_grad %dout, %x, %res, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x5x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// residual must have the type of x.
func.func @add_layer_norm_grad_residual_type(
    %dout: tensor<2x16x32xf32>, %x: tensor<2x16x32xf32>, %res: tensor<2x16x16xf32>, %gamma: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm_grad' op 'dout' ('tensor<2x16x32xf32>'), 'residual' ('tensor<2x16x16xf32>') and 'dsum' ('tensor<2x16x32xf32>') must have the type of 'x' ('tensor<2x16x32xf32>')}}
  %0:3 = xlnet.add_layer_norm_grad %dout, %x, %res, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x16xf32>, tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// dsum (the gradient of x + residual) must have the type of x.
func.func @add_layer_norm_grad_dsum_type(
    %dout: tensor<2x16x32xf32>, %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm_grad' op 'dout' ('tensor<2x16x32xf32>'), 'residual' ('tensor<2x16x32xf32>') and 'dsum' ('tensor<32x32xf32>') must have the type of 'x' ('tensor<2x16x32xf32>')}}
  %0:3 = xlnet.add_layer_norm_grad %dout, %x, %res, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>)
      -> (tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// gamma must be 1-d.
func.func @add_layer_norm_grad_gamma_rank(
    %dout: tensor<2x16x32xf32>, %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<1x32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm_grad' op 'gamma' must be [D] with D = 'x' dim 2 (32), got 'tensor<1x32xf32>'}}
  %0:3 = xlnet.add_layer_norm_grad %dout, %x, %res, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<1x32xf32>)
      -> (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// gamma must have D = 32 elements.
func.func @add_layer_norm_grad_gamma_size(
    %dout: tensor<2x16x32xf32>, %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<16xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm_grad' op 'gamma' must be [D] with D = 'x' dim 2 (32), got 'tensor<16xf32>'}}
  %0:3 = xlnet.add_layer_norm_grad %dout, %x, %res, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<16xf32>)
      -> (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// dgamma must have D = 32 elements.
func.func @add_layer_norm_grad_dgamma_size(
    %dout: tensor<2x16x32xf32>, %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm_grad' op 'dgamma' must be [D] with D = 'x' dim 2 (32), got 'tensor<64xf32>'}}
  %0:3 = xlnet.add_layer_norm_grad %dout, %x, %res, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<64xf32>, tensor<32xf32>)
  return
}

// -----

// dbeta must be 1-d [D].
func.func @add_layer_norm_grad_dbeta_rank(
    %dout: tensor<2x16x32xf32>, %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm_grad' op 'dbeta' must be [D] with D = 'x' dim 2 (32), got 'tensor<f32>'}}
  %0:3 = xlnet.add_layer_norm_grad %dout, %x, %res, %gamma eps = 9.9999999999999998E-13
      : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<32xf32>, tensor<f32>)
  return
}

// -----

// eps must be positive.
func.func @add_layer_norm_grad_eps_zero(
    %dout: tensor<2x16x32xf32>, %x: tensor<2x16x32xf32>, %res: tensor<2x16x32xf32>, %gamma: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.add_layer_norm_grad' op eps must be > 0, got 0.000000e+00}}
  %0:3 = xlnet.add_layer_norm_grad %dout, %x, %res, %gamma eps = 0.000000e+00
      : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>)
      -> (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// lm_loss_grad
//===----------------------------------------------------------------------===//

// logits must be [B, NP, V].
func.func @lm_loss_grad_logits_rank(%logits: tensor<10x64xf32>, %target: tensor<2x5xi64>, %target_mask: tensor<2x5xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss_grad' op 'logits' must have rank 3 [B, NP, V], got 'tensor<10x64xf32>'}}
  %0 = xlnet.lm_loss_grad %logits, %target, %target_mask
      : (tensor<10x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<2x5x64xf32>
  return
}

// -----

// target must be [B, NP].
func.func @lm_loss_grad_target_rank(%logits: tensor<2x5x64xf32>, %target: tensor<10xi64>, %target_mask: tensor<2x5xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss_grad' op 'target' must have rank 2 [B, NP], got 'tensor<10xi64>'}}
  %0 = xlnet.lm_loss_grad %logits, %target, %target_mask
      : (tensor<2x5x64xf32>, tensor<10xi64>, tensor<2x5xf32>) -> tensor<2x5x64xf32>
  return
}

// -----

// target_mask must be [B, NP].
func.func @lm_loss_grad_target_mask_rank(%logits: tensor<2x5x64xf32>, %target: tensor<2x5xi64>, %target_mask: tensor<2x5x1xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss_grad' op 'target_mask' must have rank 2 [B, NP], got 'tensor<2x5x1xf32>'}}
  %0 = xlnet.lm_loss_grad %logits, %target, %target_mask
      : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5x1xf32>) -> tensor<2x5x64xf32>
  return
}

// -----

// The gradient of the logits must be [B, NP, V].
func.func @lm_loss_grad_result_rank(%logits: tensor<2x5x64xf32>, %target: tensor<2x5xi64>, %target_mask: tensor<2x5xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss_grad' op 'result' must have rank 3 [B, NP, V], got 'tensor<10x64xf32>'}}
  %0 = xlnet.lm_loss_grad %logits, %target, %target_mask
      : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<10x64xf32>
  return
}

// -----

// The count dividing the gradient (gradient accumulation) is a scalar.
func.func @lm_loss_grad_count_rank(%logits: tensor<2x5x64xf32>, %target: tensor<2x5xi64>, %target_mask: tensor<2x5xf32>, %count: tensor<1xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss_grad' op 'count' must have rank 0 [], got 'tensor<1xf32>'}}
  %0 = xlnet.lm_loss_grad %logits, %target, %target_mask, %count
      : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>, tensor<1xf32>) -> tensor<2x5x64xf32>
  return
}

// -----

// target NP differs from logits NP.
func.func @lm_loss_grad_num_predict(%logits: tensor<2x5x64xf32>, %target: tensor<2x4xi64>, %target_mask: tensor<2x5xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss_grad' op NP mismatch: 'target' dim 1 is 4 but 'logits' dim 1 is 5}}
  %0 = xlnet.lm_loss_grad %logits, %target, %target_mask
      : (tensor<2x5x64xf32>, tensor<2x4xi64>, tensor<2x5xf32>) -> tensor<2x5x64xf32>
  return
}

// -----

// target_mask B differs from logits B.
func.func @lm_loss_grad_target_mask_batch(%logits: tensor<2x5x64xf32>, %target: tensor<2x5xi64>, %target_mask: tensor<1x5xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss_grad' op B mismatch: 'target_mask' dim 0 is 1 but 'logits' dim 0 is 2}}
  %0 = xlnet.lm_loss_grad %logits, %target, %target_mask
      : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<1x5xf32>) -> tensor<2x5x64xf32>
  return
}

// -----

// The gradient has the shape of the logits: V differs.
func.func @lm_loss_grad_vocab(%logits: tensor<2x5x64xf32>, %target: tensor<2x5xi64>, %target_mask: tensor<2x5xf32>) {
  // expected-error @+1 {{'xlnet.lm_loss_grad' op V mismatch: 'result' dim 2 is 32 but 'logits' dim 2 is 64}}
  %0 = xlnet.lm_loss_grad %logits, %target, %target_mask
      : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<2x5x32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// add
//===----------------------------------------------------------------------===//

// Both operands and the result have one type (SameOperandsAndResultType; generic form).
func.func @add_type_mismatch(%a: tensor<2x16x32xf32>, %b: tensor<2x5x32xf32>) {
  // expected-error @+1 {{'xlnet.add' op requires the same type for all operands and results}}
  %0 = "xlnet.add"(%a, %b) : (tensor<2x16x32xf32>, tensor<2x5x32xf32>) -> tensor<2x16x32xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// lr_schedule
//===----------------------------------------------------------------------===//

// learning_rate can not be negative.
func.func @lr_schedule_lr_negative(%step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.lr_schedule' op learning_rate must be finite and >= 0, got -1.000000e-04}}
  %0 = xlnet.lr_schedule %step decay = poly learning_rate = -1.000000e-04
      warmup_steps = 10 train_steps = 100 min_lr_ratio = 0.000000e+00
      : (tensor<i64>) -> tensor<f32>
  return
}

// -----

// NaN is not a learning rate.
func.func @lr_schedule_lr_nan(%step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.lr_schedule' op learning_rate must be finite and >= 0, got nan}}
  %0 = xlnet.lr_schedule %step decay = poly learning_rate = 0x7FF8000000000000
      warmup_steps = 10 train_steps = 100 min_lr_ratio = 0.000000e+00
      : (tensor<i64>) -> tensor<f32>
  return
}

// -----

// min_lr_ratio is a fraction of learning_rate: above 1 is rejected.
func.func @lr_schedule_min_lr_ratio_above_one(%step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.lr_schedule' op min_lr_ratio must be in [0, 1], got 1.500000e+00}}
  %0 = xlnet.lr_schedule %step decay = cos learning_rate = 1.000000e-04
      warmup_steps = 10 train_steps = 100 min_lr_ratio = 1.500000e+00
      : (tensor<i64>) -> tensor<f32>
  return
}

// -----

// min_lr_ratio can not be negative.
func.func @lr_schedule_min_lr_ratio_negative(%step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.lr_schedule' op min_lr_ratio must be in [0, 1], got -1.000000e-01}}
  %0 = xlnet.lr_schedule %step decay = poly learning_rate = 1.000000e-04
      warmup_steps = 10 train_steps = 100 min_lr_ratio = -1.000000e-01
      : (tensor<i64>) -> tensor<f32>
  return
}

// -----

// warmup_steps can not be negative.
func.func @lr_schedule_warmup_negative(%step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.lr_schedule' op warmup_steps must be >= 0 and train_steps >= 1, got -1 and 100}}
  %0 = xlnet.lr_schedule %step decay = poly learning_rate = 1.000000e-04
      warmup_steps = -1 train_steps = 100 min_lr_ratio = 0.000000e+00
      : (tensor<i64>) -> tensor<f32>
  return
}

// -----

// train_steps must be at least 1 (the decay divides by it).
func.func @lr_schedule_train_steps_zero(%step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.lr_schedule' op warmup_steps must be >= 0 and train_steps >= 1, got 10 and 0}}
  %0 = xlnet.lr_schedule %step decay = poly learning_rate = 1.000000e-04
      warmup_steps = 10 train_steps = 0 min_lr_ratio = 0.000000e+00
      : (tensor<i64>) -> tensor<f32>
  return
}

// -----

// step is a scalar: a 1-d step is rejected by the type constraint, before the verifier.
func.func @lr_schedule_step_not_scalar(%step: tensor<1xi64>) {
  // expected-error @+1 {{'xlnet.lr_schedule' op operand #0 must be 0D tensor of 64-bit signless integer values, but got 'tensor<1xi64>'}}
  %0 = xlnet.lr_schedule %step decay = poly learning_rate = 1.000000e-04
      warmup_steps = 10 train_steps = 100 min_lr_ratio = 0.000000e+00
      : (tensor<1xi64>) -> tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// global_norm
//===----------------------------------------------------------------------===//

// The norm of no tensors is rejected.
func.func @global_norm_no_operands() {
  // expected-error @+1 {{'xlnet.global_norm' op needs at least one operand}}
  %0 = xlnet.global_norm : () -> tensor<f32>
  return
}

// -----

// The norm is a scalar: a 1-d result is rejected by the type constraint.
func.func @global_norm_result_not_scalar(%g: tensor<32xf32>) {
  // expected-error @+1 {{'xlnet.global_norm' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %0 = xlnet.global_norm %g : (tensor<32xf32>) -> tensor<1xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// adam_update
//===----------------------------------------------------------------------===//

// grad must have the type of param.
func.func @adam_update_grad_type(
    %p: tensor<32xf32>, %g: tensor<64xf32>, %m: tensor<32xf32>, %v: tensor<32xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.adam_update' op 'grad' ('tensor<64xf32>') must have the type of 'param' ('tensor<32xf32>')}}
  %0:3 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 9.000000e-01 beta2 = 9.990000e-01 epsilon = 9.9999999999999995E-7
      clip = 1.000000e+00 weight_decay = 0.000000e+00 {bias_correction}
      : (tensor<32xf32>, tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// The first moment m must have the type of param.
func.func @adam_update_m_type(
    %p: tensor<32xf32>, %g: tensor<32xf32>, %m: tensor<1x32xf32>, %v: tensor<32xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.adam_update' op 'm' ('tensor<1x32xf32>') must have the type of 'param' ('tensor<32xf32>')}}
  %0:3 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 9.000000e-01 beta2 = 9.990000e-01 epsilon = 9.9999999999999995E-7
      clip = 1.000000e+00 weight_decay = 0.000000e+00 {bias_correction}
      : (tensor<32xf32>, tensor<32xf32>, tensor<1x32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// The second moment v must have the type of param.
func.func @adam_update_v_type(
    %p: tensor<32xf32>, %g: tensor<32xf32>, %m: tensor<32xf32>, %v: tensor<16xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.adam_update' op 'v' ('tensor<16xf32>') must have the type of 'param' ('tensor<32xf32>')}}
  %0:3 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 9.000000e-01 beta2 = 9.990000e-01 epsilon = 9.9999999999999995E-7
      clip = 1.000000e+00 weight_decay = 0.000000e+00 {bias_correction}
      : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<16xf32>, tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// new_param must have the type of param.
func.func @adam_update_new_param_type(
    %p: tensor<32xf32>, %g: tensor<32xf32>, %m: tensor<32xf32>, %v: tensor<32xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.adam_update' op 'new_param' ('tensor<64xf32>') must have the type of 'param' ('tensor<32xf32>')}}
  %0:3 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 9.000000e-01 beta2 = 9.990000e-01 epsilon = 9.9999999999999995E-7
      clip = 1.000000e+00 weight_decay = 0.000000e+00 {bias_correction}
      : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<64xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// new_m must have the type of param.
func.func @adam_update_new_m_type(
    %p: tensor<32xf32>, %g: tensor<32xf32>, %m: tensor<32xf32>, %v: tensor<32xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.adam_update' op 'new_m' ('tensor<f32>') must have the type of 'param' ('tensor<32xf32>')}}
  %0:3 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 9.000000e-01 beta2 = 9.990000e-01 epsilon = 9.9999999999999995E-7
      clip = 1.000000e+00 weight_decay = 0.000000e+00 {bias_correction}
      : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<32xf32>, tensor<f32>, tensor<32xf32>)
  return
}

// -----

// new_v must have the type of param.
func.func @adam_update_new_v_type(
    %p: tensor<32xf32>, %g: tensor<32xf32>, %m: tensor<32xf32>, %v: tensor<32xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.adam_update' op 'new_v' ('tensor<2x16xf32>') must have the type of 'param' ('tensor<32xf32>')}}
  %0:3 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 9.000000e-01 beta2 = 9.990000e-01 epsilon = 9.9999999999999995E-7
      clip = 1.000000e+00 weight_decay = 0.000000e+00 {bias_correction}
      : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<32xf32>, tensor<32xf32>, tensor<2x16xf32>)
  return
}

// -----

// beta1 must be below 1.
func.func @adam_update_beta1_one(
    %p: tensor<32xf32>, %g: tensor<32xf32>, %m: tensor<32xf32>, %v: tensor<32xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.adam_update' op beta1 must be in [0, 1), got 1.000000e+00}}
  %0:3 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 1.000000e+00 beta2 = 9.990000e-01 epsilon = 9.9999999999999995E-7
      clip = 1.000000e+00 weight_decay = 0.000000e+00 {bias_correction}
      : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// beta2 can not be negative.
func.func @adam_update_beta2_negative(
    %p: tensor<32xf32>, %g: tensor<32xf32>, %m: tensor<32xf32>, %v: tensor<32xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.adam_update' op beta2 must be in [0, 1), got -9.990000e-01}}
  %0:3 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 9.000000e-01 beta2 = -9.990000e-01 epsilon = 9.9999999999999995E-7
      clip = 1.000000e+00 weight_decay = 0.000000e+00 {bias_correction}
      : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// epsilon must be positive (it keeps the update finite).
func.func @adam_update_epsilon_zero(
    %p: tensor<32xf32>, %g: tensor<32xf32>, %m: tensor<32xf32>, %v: tensor<32xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.adam_update' op epsilon must be finite and > 0, got 0.000000e+00}}
  %0:3 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 9.000000e-01 beta2 = 9.990000e-01 epsilon = 0.000000e+00
      clip = 1.000000e+00 weight_decay = 0.000000e+00 {bias_correction}
      : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// weight_decay can not be negative.
func.func @adam_update_weight_decay_negative(
    %p: tensor<32xf32>, %g: tensor<32xf32>, %m: tensor<32xf32>, %v: tensor<32xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.adam_update' op weight_decay must be finite and >= 0, got -1.000000e-02}}
  %0:3 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 9.000000e-01 beta2 = 9.990000e-01 epsilon = 9.9999999999999995E-7
      clip = 1.000000e+00 weight_decay = -1.000000e-02
      : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// bias_correction (tf.train.AdamOptimizer) has no weight decay.
func.func @adam_update_bias_correction_weight_decay(
    %p: tensor<32xf32>, %g: tensor<32xf32>, %m: tensor<32xf32>, %v: tensor<32xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.adam_update' op bias_correction (tf.train.AdamOptimizer) is only used with weight_decay 0}}
  %0:3 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 9.000000e-01 beta2 = 9.990000e-01 epsilon = 9.9999999999999995E-7
      clip = 1.000000e+00 weight_decay = 1.000000e-02 {bias_correction}
      : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

// NaN is not a clip norm (<= 0 disables clipping).
func.func @adam_update_clip_nan(
    %p: tensor<32xf32>, %g: tensor<32xf32>, %m: tensor<32xf32>, %v: tensor<32xf32>,
    %lr: tensor<f32>, %n: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'xlnet.adam_update' op clip must be a number (<= 0 disables clipping)}}
  %0:3 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
      beta1 = 9.000000e-01 beta2 = 9.990000e-01 epsilon = 9.9999999999999995E-7
      clip = 0x7FF8000000000000 weight_decay = 0.000000e+00 {bias_correction}
      : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>, tensor<i64>)
      -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
  return
}

// -----

func.func @rank_mask_wrong_rank_rows(%r: tensor<2x3x16xi64>) -> tensor<2x16x24xi1> {
  // expected-error @+1 {{'perm_rank' dim 1 must be 2, got 3}}
  %0 = xlnet.rank_mask query %r mlen = 8 : (tensor<2x3x16xi64>) -> tensor<2x16x24xi1>
  return %0 : tensor<2x16x24xi1>
}

// -----

func.func @rank_mask_wrong_klen(%r: tensor<2x2x16xi64>) -> tensor<2x16x20xi1> {
  // expected-error @+1 {{K}}
  %0 = xlnet.rank_mask query %r mlen = 8 : (tensor<2x2x16xi64>) -> tensor<2x16x20xi1>
  return %0 : tensor<2x16x20xi1>
}

// -----

func.func @rel_attention_mixed_masks(%q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>,
    %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>,
    %rw: tensor<2x16xf32>, %seg_id: tensor<2x16xi64>, %mask: tensor<2x16x24xi1>) -> tensor<2x16x2x16xf32> {
  // expected-error @+1 {{'seg_mat' and 'mask' must both be dense (i1) or both compact (i64 segment ids and a perm_rank or perm_bits mask)}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rw, %rw)
      seg_mat(%seg_id) mask(%mask) scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xi64>, tensor<2x16x24xi1>) -> tensor<2x16x2x16xf32>
  return %0 : tensor<2x16x2x16xf32>
}

// -----

func.func @rel_attention_compact_bad_ranks(%q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>,
    %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>,
    %rw: tensor<2x16xf32>, %seg_id: tensor<2x16xi64>, %rank: tensor<2x16xi64>) -> tensor<2x16x2x16xf32> {
  // expected-error @+1 {{'mask' must have rank 3}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rw, %rw)
      seg_mat(%seg_id) mask(%rank) scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xi64>, tensor<2x16xi64>) -> tensor<2x16x2x16xf32>
  return %0 : tensor<2x16x2x16xf32>
}

// -----

func.func @packed_mask_wrong_words(%b: tensor<2x70x1xi64>) -> tensor<2x70x78xi1> {
  // expected-error @+1 {{W mismatch: 'perm_bits' dim 2 is 1 but ceil(S / 64) is 2}}
  %0 = xlnet.packed_mask query %b mlen = 8 : (tensor<2x70x1xi64>) -> tensor<2x70x78xi1>
  return %0 : tensor<2x70x78xi1>
}

// -----

func.func @packed_mask_wrong_klen(%b: tensor<2x16x1xi64>) -> tensor<2x16x20xi1> {
  // expected-error @+1 {{K mismatch: 'result' dim 2 is 20 but mlen + S is 24}}
  %0 = xlnet.packed_mask query %b mlen = 8 : (tensor<2x16x1xi64>) -> tensor<2x16x20xi1>
  return %0 : tensor<2x16x20xi1>
}

// -----

func.func @rel_attention_compact_bad_bits(%q: tensor<2x16x2x16xf32>, %k: tensor<2x24x2x16xf32>,
    %v: tensor<2x24x2x16xf32>, %kr: tensor<1x40x2x16xf32>, %se: tensor<2x2x16xf32>,
    %rw: tensor<2x16xf32>, %seg_id: tensor<2x16xi64>, %bits: tensor<2x16x2xi64>) -> tensor<2x16x2x16xf32> {
  // expected-error @+1 {{W mismatch: 'mask' dim 2 is 2 but ceil(S / 64) (a perm_bits mask's words per row) is 1}}
  %0 = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rw, %rw)
      seg_mat(%seg_id) mask(%bits) scale = 2.500000e-01 dropatt = 0.000000e+00
      : (tensor<2x16x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<2x2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>,
         tensor<2x16xi64>, tensor<2x16x2xi64>) -> tensor<2x16x2x16xf32>
  return %0 : tensor<2x16x2x16xf32>
}

// -----

func.func @cast_to_itself(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{'xlnet.cast' op converts 'f32' to itself: a cast must change the element type}}
  %0 = xlnet.cast %x : tensor<2x16xf32> to tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

func.func @cast_shape(%x: tensor<2x16xf32>) -> tensor<2x8xbf16> {
  // expected-error @+1 {{'xlnet.cast' op result shape ('tensor<2x8xbf16>') must be the shape of 'x' ('tensor<2x16xf32>')}}
  %0 = xlnet.cast %x : tensor<2x16xf32> to tensor<2x8xbf16>
  return %0 : tensor<2x8xbf16>
}

// -----

func.func @gemm_mixed_operands(%x: tensor<2x16x32xbf16>, %w: tensor<32x48xf32>) -> tensor<2x16x48xbf16> {
  // expected-error @+1 {{'xlnet.gemm' op 'x' ('bf16') and 'w' ('f32') must have one element type}}
  %0 = xlnet.gemm %x, %w : (tensor<2x16x32xbf16>, tensor<32x48xf32>) -> tensor<2x16x48xbf16>
  return %0 : tensor<2x16x48xbf16>
}

// -----

func.func @gemm_bias_type(%x: tensor<2x16x32xbf16>, %w: tensor<32x48xbf16>,
                          %b: tensor<48xf32>) -> tensor<2x16x48xbf16> {
  // expected-error @+1 {{'xlnet.gemm' op bias ('tensor<48xf32>') must have the result's element type ('bf16'), as cuBLASLt's bias epilogues read it}}
  %0 = xlnet.gemm %x, %w bias %b
      : (tensor<2x16x32xbf16>, tensor<32x48xbf16>, tensor<48xf32>) -> tensor<2x16x48xbf16>
  return %0 : tensor<2x16x48xbf16>
}

// -----

func.func @wgrad_mixed_operands(%x: tensor<2x16x32xbf16>, %dy: tensor<2x16x48xf32>) -> tensor<32x48xf32> {
  // expected-error @+1 {{'xlnet.gemm_wgrad' op 'x' ('bf16') and 'dy' ('f32') must have one element type}}
  %0 = xlnet.gemm_wgrad %x, %dy : (tensor<2x16x32xbf16>, tensor<2x16x48xf32>) -> tensor<32x48xf32>
  return %0 : tensor<32x48xf32>
}

// -----

func.func @global_norm_bf16(%g: tensor<4xbf16>) -> tensor<f32> {
  // expected-error @+1 {{operand #0 must be variadic of ranked tensor of 32-bit float values}}
  %0 = xlnet.global_norm %g : (tensor<4xbf16>) -> tensor<f32>
  return %0 : tensor<f32>
}
