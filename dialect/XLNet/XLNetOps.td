//===- XLNetOps.td - xlnet dialect ops ---------------------*- tablegen -*-===//
//
// Ops of the `xlnet` dialect, grouped as: inputs and embeddings, positions and
// masks, memory, attention, feed-forward and head, layer-level, kernel-level.
// Every op has a C++ verifier (XLNetOps.cpp) that names the dimensions that
// disagree.
//
//===----------------------------------------------------------------------===//

#ifndef XLNET_OPS_TD
#define XLNET_OPS_TD

include "dialect/XLNet/XLNetBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

def XLNet_EmbeddingOp : XLNet_Op<"embedding", [Pure]> {
  let summary = "word embedding lookup";
  let description = [{
    Gathers one row of the embedding table per token: `out[b, s] =
    table[ids[b, s]]`. The table is the tied `transformer.word_embedding.weight`
    (`[V, D]`). An id outside `[0, V)` is a run-time error.

    ```mlir
    %h0 = xlnet.embedding %input_k, %word_emb
        : (tensor<2x16xi64>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
    ```
  }];
  let arguments = (ins XLNet_I64Tensor:$ids, XLNet_F32Tensor:$table);
  let results = (outs XLNet_FloatTensor:$result);
  let assemblyFormat = "$ids `,` $table attr-dict `:` functional-type(operands, results)";
}

def XLNet_MaskEmbeddingOp : XLNet_Op<"mask_embedding", [Pure]> {
  let summary = "initial query stream: mask_emb for every prediction slot";
  let description = [{
    Broadcasts `transformer.mask_emb` (`[1, 1, D]`) to every prediction slot:
    the query stream `g^(0)` of shape `[B, NP, D]`.

    ```mlir
    %g0 = xlnet.mask_embedding %mask_emb
        : (tensor<1x1x32xf32>) -> tensor<2x5x32xf32>
    ```
  }];
  let arguments = (ins XLNet_F32Tensor:$mask_emb);
  let results = (outs XLNet_FloatTensor:$result);
  let assemblyFormat = "$mask_emb attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Positions and masks
//===----------------------------------------------------------------------===//

def XLNet_RelPosEncodingOp : XLNet_Op<"rel_pos_encoding", [Pure]> {
  let summary = "sinusoidal relative positional encoding (attn_type bi)";
  let description = [{
    Produces `pos_emb` of shape `[P, R, D]` with `R = klen + qlen`. Copy 0
    encodes `pos = klen, klen-1, ..., -qlen+1`; with `bi_data` a second copy
    encodes the negated sequence `-klen, ..., qlen-1` and is used by the second
    half of the batch. With `clamp_len > 0` positions are clipped to
    `[-clamp_len, clamp_len]`. Each row is `[sin(pos*f) | cos(pos*f)]` with
    `f_k = 1 / 10000^(2k/D)`: all sines first, then all cosines.

    ```mlir
    %pos = xlnet.rel_pos_encoding klen = 24 qlen = 16 clamp_len = -1 bi_data
        : tensor<2x40x32xf32>
    ```
  }];
  let arguments = (ins I64Attr:$klen, I64Attr:$qlen, I64Attr:$clamp_len,
                       UnitAttr:$bi_data);
  let results = (outs XLNet_FloatTensor:$result);
  let assemblyFormat = [{
    `klen` `=` $klen `qlen` `=` $qlen `clamp_len` `=` $clamp_len
    (`bi_data` $bi_data^)? attr-dict `:` type($result)
  }];
}

def XLNet_RelSegmentOp : XLNet_Op<"rel_segment", [Pure]> {
  let summary = "relative segment matrix: query and key in different segments";
  let description = [{
    `out[b, i, j] = seg_id[b, i] != key_seg[b, j]` where the keys are
    `[mems ; h]` and memory positions have segment 0. Only equality of segment
    ids matters. Result `[B, S, K]` with `K = mlen + S`.

    ```mlir
    %seg = xlnet.rel_segment %seg_id mlen = 8
        : (tensor<2x16xi64>) -> tensor<2x16x24xi1>
    ```
  }];
  let arguments = (ins XLNet_I64Tensor:$seg_id, I64Attr:$mlen);
  let results = (outs XLNet_MaskTensor:$result);
  let assemblyFormat = [{
    $seg_id `mlen` `=` $mlen attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_AttnMaskOp : XLNet_Op<"attn_mask", [Pure]> {
  let summary = "attention mask of the query or the content stream";
  let description = [{
    Builds the `[B, S, K]` mask (1 = may not attend) from the permutation
    mask `perm_mask` (`[B, S, S]`, 1 = may not attend, as HuggingFace takes
    it): the `mlen` memory columns are always visible, the rest is
    `perm_mask > 0`. The `query` stream uses it as is (a target cannot see
    itself); the `content` stream additionally opens the diagonal of the
    non-memory block (every position sees itself).

    ```mlir
    %mask_g = xlnet.attn_mask query %perm_mask mlen = 8
        : (tensor<2x16x16xf32>) -> tensor<2x16x24xi1>
    ```
  }];
  let arguments = (ins XLNet_StreamAttr:$stream, XLNet_F32Tensor:$perm_mask,
                       I64Attr:$mlen);
  let results = (outs XLNet_MaskTensor:$result);
  let assemblyFormat = [{
    `` $stream $perm_mask `mlen` `=` $mlen attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_RankMaskOp : XLNet_Op<"rank_mask", [Pure]> {
  let summary = "attention mask of a stream from the permutation's rank vectors";
  let description = [{
    The compact permutation mask (docs/DataPipeline.md): `perm_rank`
    (`[B, 2, S]`) holds per batch row the query ranks (row 0) and the key
    ranks (row 1), and key `j` of the non-memory block is masked for query
    `i` when `perm_rank[b, 0, i] <= perm_rank[b, 1, j]`. The result is the
    dense `[B, S, K]` mask of the `query` or `content` stream exactly as
    `xlnet.attn_mask` builds it: the `mlen` memory columns visible, the
    content stream seeing itself. `--xlnet-compact-masks` folds it (with
    `xlnet.rel_segment`) into the attention ops, which then read the ranks.

    ```mlir
    %mask_h = xlnet.rank_mask content %perm_rank mlen = 8
        : (tensor<2x2x16xi64>) -> tensor<2x16x24xi1>
    ```
  }];
  let arguments = (ins XLNet_StreamAttr:$stream, XLNet_I64Tensor:$perm_rank,
                       I64Attr:$mlen);
  let results = (outs XLNet_MaskTensor:$result);
  let assemblyFormat = [{
    `` $stream $perm_rank `mlen` `=` $mlen attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_PackedMaskOp : XLNet_Op<"packed_mask", [Pure]> {
  let summary = "attention mask of a stream from the bit-packed permutation mask";
  let description = [{
    The bit-packed permutation mask, for a `perm_mask` that has no rank form
    (docs/DataPipeline.md): `perm_bits` (`[B, S, W]`, `W = ceil(S / 64)`)
    holds bit `j % 64` of word `j / 64` of row `(b, i)` set when key `j` of
    the non-memory block is masked for query `i`. The result is the dense
    `[B, S, K]` mask of the `query` or `content` stream exactly as
    `xlnet.attn_mask` builds it, like `xlnet.rank_mask`;
    `--xlnet-compact-masks` folds it into the attention ops the same way.

    ```mlir
    %mask_g = xlnet.packed_mask query %perm_bits mlen = 8
        : (tensor<2x16x1xi64>) -> tensor<2x16x24xi1>
    ```
  }];
  let arguments = (ins XLNet_StreamAttr:$stream, XLNet_I64Tensor:$perm_bits,
                       I64Attr:$mlen);
  let results = (outs XLNet_MaskTensor:$result);
  let assemblyFormat = [{
    `` $stream $perm_bits `mlen` `=` $mlen attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_TargetPositionsOp : XLNet_Op<"target_positions", [Pure]> {
  let summary = "position of each prediction slot from the one-hot target_mapping";
  let description = [{
    For every row of `target_mapping` (`[B, NP, S]`, one-hot or all zero)
    returns the column of its single 1, or -1 for a padding slot. A row that
    is neither is a run-time error. The query stream computes only these rows.

    ```mlir
    %rows = xlnet.target_positions %target_mapping
        : (tensor<2x5x16xf32>) -> tensor<2x5xi64>
    ```
  }];
  let arguments = (ins XLNet_F32Tensor:$target_mapping);
  let results = (outs XLNet_I64Tensor:$result);
  let assemblyFormat = "$target_mapping attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def XLNet_MemConcatOp : XLNet_Op<"mem_concat", [Pure]> {
  let summary = "keys and values source: [mems ; h]";
  let description = [{
    Concatenates the incoming memory (time-major `[M, B, D]`) in front of the
    content stream (`[B, S, D]`), giving the batch-major `[B, M + S, D]` that
    keys and values are projected from.

    ```mlir
    %cat = xlnet.mem_concat %mems, %h
        : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<2x24x32xf32>
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$mems, XLNet_FloatTensor:$h);
  let results = (outs XLNet_FloatTensor:$result);
  let assemblyFormat = "$mems `,` $h attr-dict `:` functional-type(operands, results)";
}

def XLNet_MemCacheOp : XLNet_Op<"mem_cache", [Pure]> {
  let summary = "next step's memory: concat(mems, h[:reuse_len])[-mem_len:]";
  let description = [{
    Caches the first `reuse_len` positions of a layer's input after the
    incoming memory and keeps the last `L = min(mem_len, M + reuse_len)` rows
    (time-major `[L, B, D]`). Gradients do not flow through the result
    (stop-gradient). The `mems` operand is absent when there is no incoming
    memory.

    ```mlir
    %new = xlnet.mem_cache mems %mems, %h reuse_len = 8 mem_len = 8
        : (tensor<8x2x32xf32>, tensor<2x16x32xf32>) -> tensor<8x2x32xf32>
    ```
  }];
  let arguments = (ins Optional<XLNet_F32Tensor>:$mems, XLNet_FloatTensor:$h,
                       I64Attr:$reuse_len, I64Attr:$mem_len);
  let results = (outs XLNet_F32Tensor:$result);
  let assemblyFormat = [{
    (`mems` $mems^ `,`)? $h `reuse_len` `=` $reuse_len `mem_len` `=` $mem_len
    attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def XLNet_HeadProjOp : XLNet_Op<"head_proj", [Pure]> {
  let summary = "projection into heads: x · W with W of shape [D, N, H]";
  let description = [{
    `out[a, t, n, h] = Σ_d x[a, t, d] · W[d, n, h]`. Used for the queries of
    both streams, the keys and values (from `[mems ; h]`) and the positional
    keys `k_r` (from `pos_emb`, projected once per step).

    ```mlir
    %q = xlnet.head_proj %h, %w_q
        : (tensor<2x16x32xf32>, tensor<32x2x16xf32>) -> tensor<2x16x2x16xf32>
    ```
  }];
  let arguments = (ins XLNet_F32Tensor:$x, XLNet_F32Tensor:$weight);
  let results = (outs XLNet_F32Tensor:$result);
  let assemblyFormat = "$x `,` $weight attr-dict `:` functional-type(operands, results)";
}

def XLNet_RelAttentionOp : XLNet_Op<"rel_attention", [Pure]> {
  let summary = "relative attention core: ac + rel-shifted bd + ef, mask, softmax, ·V";
  let description = [{
    For query row `t` of batch row `b` and head `n`, at position
    `i = rows[b, t]` (or `i = t` without `rows`):

    ```
    ac[j] = (q + r_w_bias) · k[j]
    bd[j] = (q + r_r_bias) · k_r[p, S - i + j]      // XLNet's rel_shift
    ef[j] = (q + r_s_bias) · seg_embed[seg_mat[b, i, j]]
    s[j]  = (ac + bd + ef) * scale - 1e30 * mask[b, i, j]
    out   = Σ_j softmax(s)[j] · v[j]   (dropout `dropatt` on the probabilities)
    ```

    `p` selects the bi_data half of the batch. With `rows`, only the `T`
    prediction slots are computed (query stream) and a slot with `i < 0`
    (padding) produces 0; without `rows`, `T = S` (content stream).

    The masks are dense (`seg_mat`, `mask`: `i1 [B, S, K]`) or compact
    (`seg_mat` the segment ids `i64 [B, S]`, `mask` the ranks
    `i64 [B, 2, S]` of `xlnet.rank_mask` or the bits `i64 [B, S, W]` of
    `xlnet.packed_mask`, for the stream the presence of `rows` says);
    `--xlnet-compact-masks` makes them compact.
    `site` (optional) fixes the dropatt random stream, as for `xlnet.dropout`.

    ```mlir
    %attn = xlnet.rel_attention q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se)
        biases(%rw, %rr, %rs) seg_mat(%seg) mask(%mask) rows(%rows)
        scale = 2.500000e-01 dropatt = 0.000000e+00
        : (tensor<2x5x2x16xf32>, tensor<2x24x2x16xf32>, tensor<2x24x2x16xf32>,
           tensor<1x40x2x16xf32>, tensor<2x2x16xf32>, tensor<2x16xf32>,
           tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16x24xi1>,
           tensor<2x16x24xi1>, tensor<2x5xi64>) -> tensor<2x5x2x16xf32>
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$q, XLNet_FloatTensor:$k, XLNet_FloatTensor:$v,
                       XLNet_FloatTensor:$k_r, XLNet_F32Tensor:$seg_embed,
                       XLNet_F32Tensor:$r_w_bias, XLNet_F32Tensor:$r_r_bias,
                       XLNet_F32Tensor:$r_s_bias, XLNet_AttnMaskOperand:$seg_mat,
                       XLNet_AttnMaskOperand:$mask, Optional<XLNet_I64Tensor>:$rows,
                       F64Attr:$scale, F64Attr:$dropatt,
                       OptionalAttr<I64Attr>:$site);
  let results = (outs XLNet_FloatTensor:$result);
  let assemblyFormat = [{
    `q` `(` $q `)` `k` `(` $k `)` `v` `(` $v `)` `k_r` `(` $k_r `)`
    `seg_embed` `(` $seg_embed `)` `biases` `(` $r_w_bias `,` $r_r_bias `,` $r_s_bias `)`
    `seg_mat` `(` $seg_mat `)` `mask` `(` $mask `)` (`rows` `(` $rows^ `)`)?
    `scale` `=` $scale `dropatt` `=` $dropatt
    attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_PostAttentionOp : XLNet_Op<"post_attention", [Pure]> {
  let summary = "o-projection, dropout, residual and LayerNorm";
  let description = [{
    `LN(dropout(Σ_{n,h} attn[.., n, h] · W_o[d, n, h]) + residual)` with the
    LayerNorm parameters `rel_attn.layer_norm.{weight,bias}` and epsilon `eps`.

    ```mlir
    %h1 = xlnet.post_attention %attn residual %h weight %w_o
        layer_norm(%ln_w, %ln_b) eps = 9.9999999999999998E-13 dropout = 0.000000e+00
        : (tensor<2x16x2x16xf32>, tensor<2x16x32xf32>, tensor<32x2x16xf32>,
           tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
    ```
  }];
  let arguments = (ins XLNet_F32Tensor:$attn, XLNet_F32Tensor:$residual,
                       XLNet_F32Tensor:$o_weight, XLNet_F32Tensor:$ln_weight,
                       XLNet_F32Tensor:$ln_bias, F64Attr:$eps, F64Attr:$dropout);
  let results = (outs XLNet_F32Tensor:$result);
  let assemblyFormat = [{
    $attn `residual` $residual `weight` $o_weight
    `layer_norm` `(` $ln_weight `,` $ln_bias `)` `eps` `=` $eps `dropout` `=` $dropout
    attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Feed-forward and head
//===----------------------------------------------------------------------===//

def XLNet_FFNOp : XLNet_Op<"ffn", [Pure]> {
  let summary = "position-wise feed-forward with residual and LayerNorm";
  let description = [{
    `LN(x + dropout(dropout(act(x · W1ᵀ + b1)) · W2ᵀ + b2))` with the
    HuggingFace shapes `layer_1.weight [I, D]`, `layer_2.weight [D, I]`.

    ```mlir
    %y = xlnet.ffn %x layer_1(%w1, %b1) layer_2(%w2, %b2) layer_norm(%ln_w, %ln_b)
        activation = relu eps = 9.9999999999999998E-13 dropout = 0.000000e+00
        : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>,
           tensor<32x48xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
        -> tensor<2x16x32xf32>
    ```
  }];
  let arguments = (ins XLNet_F32Tensor:$x, XLNet_F32Tensor:$w1, XLNet_F32Tensor:$b1,
                       XLNet_F32Tensor:$w2, XLNet_F32Tensor:$b2,
                       XLNet_F32Tensor:$ln_weight, XLNet_F32Tensor:$ln_bias,
                       XLNet_ActivationAttr:$activation, F64Attr:$eps,
                       F64Attr:$dropout);
  let results = (outs XLNet_F32Tensor:$result);
  let assemblyFormat = [{
    $x `layer_1` `(` $w1 `,` $b1 `)` `layer_2` `(` $w2 `,` $b2 `)`
    `layer_norm` `(` $ln_weight `,` $ln_bias `)` `activation` `=` `` $activation
    `eps` `=` $eps `dropout` `=` $dropout attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_LMHeadOp : XLNet_Op<"lm_head", [Pure]> {
  let summary = "LM head with the tied embedding: g · Eᵀ + b";
  let description = [{
    Logits of every prediction slot, `[B, NP, V]`, from the last query stream
    `[B, NP, D]`, the word embedding `[V, D]` and `lm_loss.bias` `[V]`.

    ```mlir
    %logits = xlnet.lm_head %g, %word_emb, %lm_bias
        : (tensor<2x5x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<2x5x64xf32>
    ```
  }];
  let arguments = (ins XLNet_F32Tensor:$g, XLNet_F32Tensor:$embedding,
                       XLNet_F32Tensor:$bias);
  let results = (outs XLNet_F32Tensor:$result);
  let assemblyFormat = "$g `,` $embedding `,` $bias attr-dict `:` functional-type(operands, results)";
}

def XLNet_LMLossOp : XLNet_Op<"lm_loss", [Pure]> {
  let summary = "masked-mean cross-entropy over the prediction slots";
  let description = [{
    `per_token_loss = logsumexp(logits) - logits[target]` for every slot and
    `loss = Σ(per_token_loss · target_mask) / Σ target_mask`.

    ```mlir
    %loss, %ptl = xlnet.lm_loss %logits, %target, %target_mask
        : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>)
        -> (tensor<f32>, tensor<2x5xf32>)
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$logits, XLNet_I64Tensor:$target,
                       XLNet_F32Tensor:$target_mask);
  let results = (outs XLNet_ScalarF32:$loss, XLNet_F32Tensor:$per_token_loss);
  let assemblyFormat = [{
    $logits `,` $target `,` $target_mask attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Layer level
//===----------------------------------------------------------------------===//

def XLNet_TwoStreamLayerOp : XLNet_Op<"two_stream_layer", [Pure]> {
  let summary = "one XLNet layer: both attention streams, FFN and the memory cache";
  let description = [{
    One two-stream layer with weights shared by both streams. Keys and values
    come from `[mems ; h]`; the content stream `h` attends with the content
    mask, the query stream `g` (only the prediction slots, at positions
    `rows`) with the query mask. Both go through post-attention and the FFN.
    When `mem_len > 0` the layer also returns its memory for the next step,
    `mem_cache(h, mems)` (stop-gradient). `--xlnet-decompose-layers` expands
    this op into the ops above.

    ```mlir
    %h1, %g1, %m1 = xlnet.two_stream_layer h(%h) g(%g) mems(%mems) pos(%pos)
        seg(%seg) masks(%mask_h, %mask_g) rows(%rows)
        attn(%wq, %wk, %wv, %wo, %wr) biases(%rw, %rr, %rs) seg_embed(%se)
        attn_ln(%aw, %ab) ffn(%w1, %b1, %w2, %b2) ffn_ln(%fw, %fb)
        {activation = #xlnet<activation relu>, dropatt = 0.0 : f64,
         dropout = 0.0 : f64, eps = 1.0e-12 : f64, mem_len = 8 : i64,
         reuse_len = 8 : i64}
        : (...) -> (tensor<2x16x32xf32>, tensor<2x5x32xf32>, tensor<8x2x32xf32>)
    ```
  }];
  let arguments = (ins XLNet_F32Tensor:$h, XLNet_F32Tensor:$g,
                       Optional<XLNet_F32Tensor>:$mems, XLNet_F32Tensor:$pos_emb,
                       XLNet_MaskTensor:$seg_mat, XLNet_MaskTensor:$mask_h,
                       XLNet_MaskTensor:$mask_g, XLNet_I64Tensor:$rows,
                       XLNet_F32Tensor:$q_weight, XLNet_F32Tensor:$k_weight,
                       XLNet_F32Tensor:$v_weight, XLNet_F32Tensor:$o_weight,
                       XLNet_F32Tensor:$r_weight, XLNet_F32Tensor:$r_w_bias,
                       XLNet_F32Tensor:$r_r_bias, XLNet_F32Tensor:$r_s_bias,
                       XLNet_F32Tensor:$seg_embed,
                       XLNet_F32Tensor:$attn_ln_weight, XLNet_F32Tensor:$attn_ln_bias,
                       XLNet_F32Tensor:$ff_w1, XLNet_F32Tensor:$ff_b1,
                       XLNet_F32Tensor:$ff_w2, XLNet_F32Tensor:$ff_b2,
                       XLNet_F32Tensor:$ff_ln_weight, XLNet_F32Tensor:$ff_ln_bias,
                       XLNet_ActivationAttr:$activation, I64Attr:$reuse_len,
                       I64Attr:$mem_len, F64Attr:$eps, F64Attr:$dropout,
                       F64Attr:$dropatt);
  let results = (outs XLNet_F32Tensor:$h_out, XLNet_F32Tensor:$g_out,
                      Optional<XLNet_F32Tensor>:$new_mems);
  let assemblyFormat = [{
    `h` `(` $h `)` `g` `(` $g `)` (`mems` `(` $mems^ `)`)? `pos` `(` $pos_emb `)`
    `seg` `(` $seg_mat `)` `masks` `(` $mask_h `,` $mask_g `)` `rows` `(` $rows `)`
    `attn` `(` $q_weight `,` $k_weight `,` $v_weight `,` $o_weight `,` $r_weight `)`
    `biases` `(` $r_w_bias `,` $r_r_bias `,` $r_s_bias `)` `seg_embed` `(` $seg_embed `)`
    `attn_ln` `(` $attn_ln_weight `,` $attn_ln_bias `)`
    `ffn` `(` $ff_w1 `,` $ff_b1 `,` $ff_w2 `,` $ff_b2 `)`
    `ffn_ln` `(` $ff_ln_weight `,` $ff_ln_bias `)`
    attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Kernel level (produced by --xlnet-lower-to-kernels)
//===----------------------------------------------------------------------===//

def XLNet_GemmOp : XLNet_Op<"gemm", [Pure, AttrSizedOperandSegments]> {
  let summary = "matrix multiply with optional bias and activation epilogue";
  let description = [{
    `y = act(x · op(w) + bias)`. `x` is viewed as a matrix whose columns are
    its last `k_rank` dims; `w` as `[K, N]` with its K dims first, or, with
    `transpose_w`, as `[N, K]` with its K dims last. The result has the
    leading dims of `x` followed by the N dims of `w`. `bias` has N elements.
    One cuBLASLt call (bias and relu/gelu epilogues fit there).

    ```mlir
    %y = xlnet.gemm %x, %w1 bias %b1 {activation = #xlnet<activation relu>, transpose_w}
        : (tensor<2x16x32xf32>, tensor<48x32xf32>, tensor<48xf32>) -> tensor<2x16x48xf32>
    ```

    Forms made by `--xlnet-fuse-kernels` (docs/Plan.md "Fused forms"):
    - `init %c`: `y = c + x · op(w)` (the GEMM with beta 1; no bias, no
      activation);
    - `activation = gelu_tanh` with a bias and a second result `aux`: `aux`
      is the pre-activation `x · op(w) + bias` (cuBLASLt's GELU_AUX_BIAS);
    - `activation_grad = gelu_tanh` with `pre %p`: `y = (x · op(w)) ·
      gelu'(p)`, and the second result `aux` is its bias gradient, `y`
      summed over its rows (cuBLASLt's DGELU_BGRAD).
  }];
  let arguments = (ins XLNet_FloatTensor:$x, XLNet_FloatTensor:$w,
                       Optional<XLNet_FloatTensor>:$bias,
                       Optional<XLNet_FloatTensor>:$pre,
                       Optional<XLNet_FloatTensor>:$init,
                       DefaultValuedAttr<I64Attr, "1">:$k_rank,
                       UnitAttr:$transpose_w,
                       DefaultValuedAttr<XLNet_ActivationAttr,
                                         "::mlir::xlnet::Activation::none">:$activation,
                       DefaultValuedAttr<XLNet_ActivationAttr,
                                         "::mlir::xlnet::Activation::none">:$activation_grad);
  let results = (outs XLNet_FloatTensor:$result, Optional<XLNet_FloatTensor>:$aux);
  let assemblyFormat = [{
    $x `,` $w (`bias` $bias^)? (`pre` $pre^)? (`init` $init^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$x, "::mlir::Value":$w,
                   "::mlir::Value":$bias), [{
      build($_builder, $_state, result, /*aux=*/::mlir::Type(), x, w, bias,
            /*pre=*/::mlir::Value(), /*init=*/::mlir::Value());
    }]>
  ];
}

def XLNet_AddLayerNormOp : XLNet_Op<"add_layer_norm", [Pure]> {
  let summary = "LayerNorm(x + residual) over the last dim";
  let description = [{
    Residual add followed by LayerNorm with biased variance and epsilon `eps`.

    With `x_dropout` and `x_dropout_site` (made by `--xlnet-fuse-kernels`
    from XLNet's `LayerNorm(dropout(h) + residual)`): `x` is h and the op
    drops it itself, as `xlnet.dropout` with that rate and site would,
    rounded to x's type: `LayerNorm(dropout(x) + residual)`.

    ```mlir
    %y = xlnet.add_layer_norm %x, %res, %gamma, %beta eps = 9.9999999999999998E-13
        : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
        -> tensor<2x16x32xf32>
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$x, XLNet_FloatTensor:$residual,
                       XLNet_F32Tensor:$gamma, XLNet_F32Tensor:$beta, F64Attr:$eps,
                       OptionalAttr<F64Attr>:$x_dropout,
                       OptionalAttr<I64Attr>:$x_dropout_site);
  let results = (outs XLNet_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $residual `,` $gamma `,` $beta `eps` `=` $eps attr-dict
    `:` functional-type(operands, results)
  }];
}

def XLNet_DropoutOp : XLNet_Op<"dropout", [SameOperandsAndResultType]> {
  let summary = "inverted dropout (training)";
  let description = [{
    Zeroes each element with probability `rate` and scales the rest by
    `1 / (1 - rate)`. The keep decision is a deterministic function of the
    step seed, the op's site and the element index. Not `Pure`: two dropouts
    of the same value are different. `site` (optional) fixes the random
    stream: `--xlnet-differentiate` numbers every dropout site of the forward
    and gives the backward dropout the site of its forward, so both use the
    same mask; the plan emitter numbers dropouts without one.

    The element index counts rows of the global batch: the outer dimension
    of `x` is the batch, and a step that runs some of its rows (a rank's, a
    micro-batch's) draws the mask those rows have in the whole batch. With
    `batch_shared`, `x` has no batch dimension (the relative positions) and
    every row, however the batch is split, sees one mask.

    ```mlir
    %y = xlnet.dropout %x rate = 1.000000e-01 : tensor<2x16x32xf32>
    %p = xlnet.dropout %pos rate = 1.000000e-01 {batch_shared} : tensor<1x48x32xf32>
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$x, F64Attr:$rate,
                       OptionalAttr<I64Attr>:$site, UnitAttr:$batch_shared);
  let results = (outs XLNet_FloatTensor:$result);
  let assemblyFormat = "$x `rate` `=` $rate attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Backward (produced by --xlnet-differentiate)
//===----------------------------------------------------------------------===//

def XLNet_EmbeddingGradOp : XLNet_Op<"embedding_grad", [Pure]> {
  let summary = "gradient of the embedding table: scatter-add of dout by id";
  let description = [{
    `result = 0; result[ids[b, s]] += dout[b, s]` for every position. An id
    outside `[0, V)` is a run-time error.

    ```mlir
    %dE = xlnet.embedding_grad %input_k, %dh0
        : (tensor<2x16xi64>, tensor<2x16x32xf32>) -> tensor<64x32xf32>
    ```
  }];
  let arguments = (ins XLNet_I64Tensor:$ids, XLNet_FloatTensor:$dout,
                       Optional<XLNet_F32Tensor>:$init);
  let results = (outs XLNet_F32Tensor:$result);
  let assemblyFormat = [{
    $ids `,` $dout (`init` $init^)? attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_MaskEmbeddingGradOp : XLNet_Op<"mask_embedding_grad", [Pure]> {
  let summary = "gradient of mask_emb: sum of dout over every prediction slot";
  let description = [{
    ```mlir
    %dm = xlnet.mask_embedding_grad %dg0
        : (tensor<2x5x32xf32>) -> tensor<1x1x32xf32>
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$dout);
  let results = (outs XLNet_F32Tensor:$result);
  let assemblyFormat = "$dout attr-dict `:` functional-type(operands, results)";
}

def XLNet_MemConcatGradOp : XLNet_Op<"mem_concat_grad", [Pure]> {
  let summary = "gradient of mem_concat with respect to h (memory is stop-gradient)";
  let description = [{
    `result[b, s] = dout[b, K - S + s]`: the last `S` key rows; the memory
    rows get no gradient.

    ```mlir
    %dh = xlnet.mem_concat_grad %dcat
        : (tensor<2x24x32xf32>) -> tensor<2x16x32xf32>
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$dout, Optional<XLNet_FloatTensor>:$init);
  let results = (outs XLNet_FloatTensor:$result);
  let assemblyFormat = [{
    $dout (`init` $init^)? attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_ActivationOp : XLNet_Op<"activation", [Pure, SameOperandsAndResultType]> {
  let summary = "elementwise activation";
  let description = [{
    `result = act(x)`. `--xlnet-differentiate` splits a gemm's activation
    epilogue into this op so the pre-activation is available to the backward.

    ```mlir
    %y = xlnet.activation gelu_tanh %z : tensor<2x16x48xf32>
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$x, XLNet_ActivationAttr:$activation);
  let results = (outs XLNet_FloatTensor:$result);
  // SameOperandsAndResultType is the whole rule.
  let hasVerifier = 0;
  let assemblyFormat = "`` $activation $x attr-dict `:` type($result)";
}

def XLNet_ActivationGradOp : XLNet_Op<"activation_grad", [Pure, SameOperandsAndResultType]> {
  let summary = "gradient of an elementwise activation";
  let description = [{
    `result = dy · act'(x)` with `x` the pre-activation.

    ```mlir
    %dz = xlnet.activation_grad gelu_tanh %dy, %z : tensor<2x16x48xf32>
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$dy, XLNet_FloatTensor:$x,
                       XLNet_ActivationAttr:$activation);
  let results = (outs XLNet_FloatTensor:$result);
  let assemblyFormat = "`` $activation $dy `,` $x attr-dict `:` type($result)";
}

def XLNet_GemmWGradOp : XLNet_Op<"gemm_wgrad", [Pure]> {
  let summary = "weight gradient of a gemm: xᵀ · dy";
  let description = [{
    The gradient of `w` in `y = x · op(w)` (`xlnet.gemm` with the same
    `k_rank` and `transpose_w`): `x` viewed as `[M, K]`, `dy` as `[M, N]`
    (the leading dims of `x`), and the result has the shape of `w`:
    `xᵀ · dy` laid out `[K…, N…]`, or with `transpose_w` `dyᵀ · x` laid out
    `[N…, K…]`.

    ```mlir
    %dw1 = xlnet.gemm_wgrad %x, %dz {transpose_w}
        : (tensor<2x16x32xf32>, tensor<2x16x48xf32>) -> tensor<48x32xf32>
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$x, XLNet_FloatTensor:$dy,
                       Optional<XLNet_F32Tensor>:$init,
                       DefaultValuedAttr<I64Attr, "1">:$k_rank,
                       UnitAttr:$transpose_w);
  let results = (outs XLNet_F32Tensor:$result);
  let assemblyFormat = [{
    $x `,` $dy (`init` $init^)? attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_BiasGradOp : XLNet_Op<"bias_grad", [Pure]> {
  let summary = "gradient of a bias: dy summed over its leading dims";
  let description = [{
    The result has `n` elements (rank 1); `dy` is viewed as `[numel / n, n]`
    and summed over its rows.

    ```mlir
    %db1 = xlnet.bias_grad %dz : (tensor<2x16x48xf32>) -> tensor<48xf32>
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$dy, Optional<XLNet_F32Tensor>:$init);
  let results = (outs XLNet_F32Tensor:$result);
  let assemblyFormat = [{
    $dy (`init` $init^)? attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_RelAttentionGradOp : XLNet_Op<"rel_attention_grad", [Pure, AttrSizedOperandSegments]> {
  let summary = "gradient of rel_attention with respect to its float operands";
  let description = [{
    Takes `dout` and exactly the operands and attributes of the forward
    `xlnet.rel_attention` (the same `site`, hence the same dropatt mask) and
    returns the gradients of `q, k, v, k_r, seg_embed, r_w_bias, r_r_bias,
    r_s_bias`. The softmax is recomputed from the operands, as a fused
    kernel does; padding rows (`rows < 0`) contribute nothing.

    `inits(...)` with `init_results = array<i64: ...>` (made by
    `--xlnet-fuse-kernels`): result `init_results[i]` is `inits[i]` plus the
    gradient (any result but `dq`, 1 to 7).

    ```mlir
    %dq, %dk, %dv, %dkr, %dse, %drw, %drr, %drs = xlnet.rel_attention_grad
        dout(%d) q(%q) k(%k) v(%v) k_r(%kr) seg_embed(%se) biases(%rw, %rr, %rs)
        seg_mat(%seg) mask(%mask) scale = 2.500000e-01 dropatt = 0.000000e+00
        : (...) -> (...)
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$dout, XLNet_FloatTensor:$q,
                       XLNet_FloatTensor:$k, XLNet_FloatTensor:$v,
                       XLNet_FloatTensor:$k_r, XLNet_F32Tensor:$seg_embed,
                       XLNet_F32Tensor:$r_w_bias, XLNet_F32Tensor:$r_r_bias,
                       XLNet_F32Tensor:$r_s_bias, XLNet_AttnMaskOperand:$seg_mat,
                       XLNet_AttnMaskOperand:$mask, Optional<XLNet_I64Tensor>:$rows,
                       Variadic<XLNet_FloatTensor>:$inits,
                       F64Attr:$scale, F64Attr:$dropatt,
                       OptionalAttr<I64Attr>:$site,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$init_results);
  let results = (outs XLNet_FloatTensor:$dq, XLNet_FloatTensor:$dk,
                      XLNet_FloatTensor:$dv, XLNet_FloatTensor:$dk_r,
                      XLNet_F32Tensor:$dseg_embed, XLNet_F32Tensor:$dr_w_bias,
                      XLNet_F32Tensor:$dr_r_bias, XLNet_F32Tensor:$dr_s_bias);
  let assemblyFormat = [{
    `dout` `(` $dout `)` `q` `(` $q `)` `k` `(` $k `)` `v` `(` $v `)` `k_r` `(` $k_r `)`
    `seg_embed` `(` $seg_embed `)` `biases` `(` $r_w_bias `,` $r_r_bias `,` $r_s_bias `)`
    `seg_mat` `(` $seg_mat `)` `mask` `(` $mask `)` (`rows` `(` $rows^ `)`)?
    (`inits` `(` $inits^ `)`)?
    `scale` `=` $scale `dropatt` `=` $dropatt
    attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_AddLayerNormGradOp : XLNet_Op<"add_layer_norm_grad", [Pure]> {
  let summary = "gradient of add_layer_norm";
  let description = [{
    Returns the gradient of `x + residual` (the gradient of both `x` and
    `residual`), of `gamma` and of `beta`. The statistics are recomputed from
    `x + residual`.

    `inits(...)` with `init_results = array<i64: ...>` (made by
    `--xlnet-fuse-kernels`): result `init_results[i]` (1: dgamma, 2: dbeta)
    is `inits[i]` plus the gradient.

    `x_dropout`, `x_dropout_site`: as on `xlnet.add_layer_norm`, `x` is the
    pre-dropout h and the dropout is recomputed. `dsum_dropout`,
    `dsum_dropout_site` with a fourth result `dsum_dropped`: that result is
    `xlnet.dropout` of `dsum` with that rate and site (the gradient through
    the forward's dropout before this LayerNorm).

    ```mlir
    %dsum, %dgamma, %dbeta = xlnet.add_layer_norm_grad %dy, %x, %res, %gamma
        eps = 9.9999999999999998E-13
        : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>,
           tensor<32xf32>) -> (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$dout, XLNet_FloatTensor:$x,
                       XLNet_FloatTensor:$residual, XLNet_F32Tensor:$gamma,
                       Variadic<XLNet_F32Tensor>:$inits,
                       F64Attr:$eps,
                       DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$init_results,
                       OptionalAttr<F64Attr>:$x_dropout,
                       OptionalAttr<I64Attr>:$x_dropout_site,
                       OptionalAttr<F64Attr>:$dsum_dropout,
                       OptionalAttr<I64Attr>:$dsum_dropout_site);
  let results = (outs XLNet_FloatTensor:$dsum, XLNet_F32Tensor:$dgamma,
                      XLNet_F32Tensor:$dbeta, Optional<XLNet_FloatTensor>:$dsum_dropped);
  let assemblyFormat = [{
    $dout `,` $x `,` $residual `,` $gamma (`inits` `(` $inits^ `)`)? `eps` `=` $eps
    attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_LMLossGradOp : XLNet_Op<"lm_loss_grad", [Pure]> {
  let summary = "gradient of the loss with respect to the logits";
  let description = [{
    `d loss / d logits = (softmax(logits) - onehot(target)) · target_mask /
    count`, `count` = Σ target_mask (zeros when `count = 0`). The gradient
    of the step is always the gradient of `loss`, so there is no incoming
    gradient.

    The optional `count` (`tensor<f32>`) replaces Σ target_mask as the
    denominator: a micro-batch of gradient accumulation
    (`--xlnet-accumulate-gradients`) divides by the predicted tokens of all
    the micro-batches of its step, so that their gradients sum to the
    gradient of the whole batch's loss.

    ```mlir
    %dlogits = xlnet.lm_loss_grad %logits, %target, %target_mask
        : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>) -> tensor<2x5x64xf32>
    %scaled = xlnet.lm_loss_grad %logits, %target, %target_mask, %count
        : (tensor<2x5x64xf32>, tensor<2x5xi64>, tensor<2x5xf32>, tensor<f32>) -> tensor<2x5x64xf32>
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$logits, XLNet_I64Tensor:$target,
                       XLNet_F32Tensor:$target_mask, Optional<XLNet_F32Tensor>:$count);
  let results = (outs XLNet_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $target `,` $target_mask (`,` $count^)? attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_AddOp : XLNet_Op<"add", [Pure, Commutative, SameOperandsAndResultType]> {
  let summary = "elementwise sum (gradient accumulation)";
  let description = [{
    ```mlir
    %g = xlnet.add %a, %b : tensor<2x16x32xf32>
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$lhs, XLNet_FloatTensor:$rhs);
  let results = (outs XLNet_FloatTensor:$result);
  // SameOperandsAndResultType is the whole rule.
  let hasVerifier = 0;
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Mixed precision (produced by --xlnet-mixed-precision)
//===----------------------------------------------------------------------===//

def XLNet_CastOp : XLNet_Op<"cast", [Pure]> {
  let summary = "elementwise conversion between f32 and bf16";
  let description = [{
    The value of `x` in the result's element type: f32 to bf16 rounds to
    nearest even, bf16 to f32 is exact. `--xlnet-mixed-precision` inserts it
    where an f32 value (a parameter) feeds a bf16 GEMM and where a bf16 value
    is returned.

    ```mlir
    %w16 = xlnet.cast %w : tensor<32x2x16xf32> to tensor<32x2x16xbf16>
    ```
  }];
  let arguments = (ins XLNet_FloatTensor:$x);
  let results = (outs XLNet_FloatTensor:$result);
  let hasVerifier = 1;
  let assemblyFormat = "$x attr-dict `:` type($x) `to` type($result)";
}

//===----------------------------------------------------------------------===//
// Optimizer (produced by --xlnet-apply-optimizer)
//===----------------------------------------------------------------------===//

def XLNet_LRScheduleOp : XLNet_Op<"lr_schedule", [Pure]> {
  let summary = "learning rate of the official schedule at `step`";
  let description = [{
    `model_utils.get_train_op`: linear warmup `step / warmup_steps · lr`
    for `step < warmup_steps`, then `poly` (linear) or `cos` decay to
    `lr · min_lr_ratio` at `train_steps`. `step` counts the updates already
    applied (TensorFlow's global_step).

    ```mlir
    %lr = xlnet.lr_schedule %step decay = poly learning_rate = 1.000000e-04
        warmup_steps = 10 train_steps = 100 min_lr_ratio = 0.000000e+00
        : (tensor<i64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins XLNet_ScalarI64:$step, XLNet_LRDecayAttr:$decay,
                       F64Attr:$learning_rate, I64Attr:$warmup_steps,
                       I64Attr:$train_steps, F64Attr:$min_lr_ratio);
  let results = (outs XLNet_ScalarF32:$result);
  let assemblyFormat = [{
    $step `decay` `=` `` $decay `learning_rate` `=` $learning_rate
    `warmup_steps` `=` $warmup_steps `train_steps` `=` $train_steps
    `min_lr_ratio` `=` $min_lr_ratio attr-dict `:` functional-type(operands, results)
  }];
}

def XLNet_GlobalNormOp : XLNet_Op<"global_norm", [Pure]> {
  let summary = "global L2 norm of a list of tensors";
  let description = [{
    `sqrt(Σ_i Σ g_i²)` over every element of every operand (the norm
    `tf.clip_by_global_norm` clips by).

    ```mlir
    %n = xlnet.global_norm %g0, %g1 : (tensor<64x32xf32>, tensor<32xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<XLNet_F32Tensor>:$grads);
  let results = (outs XLNet_ScalarF32:$result);
  let assemblyFormat = "$grads attr-dict `:` functional-type(operands, results)";
}

def XLNet_AdamUpdateOp : XLNet_Op<"adam_update", [Pure]> {
  let summary = "one Adam / AdamWeightDecay update of a parameter";
  let description = [{
    With `g = grad · clip / max(grad_norm, clip)` (no clipping when
    `clip <= 0`): `m' = β1 m + (1-β1) g`, `v' = β2 v + (1-β2) g²`; with
    `bias_correction` (`tf.train.AdamOptimizer`, weight decay 0)
    `param' = param - lr·sqrt(1-β2^t)/(1-β1^t) · m'/(sqrt(v')+ε)`,
    `t = step + 1`; without (the official AdamWeightDecayOptimizer)
    `param' = param - lr · (m'/(sqrt(v')+ε) + weight_decay · param)`.
    Returns the new parameter and moments.

    ```mlir
    %p1, %m1, %v1 = xlnet.adam_update %p, %g, %m, %v lr(%lr) grad_norm(%n) step(%step)
        beta1 = 9.000000e-01 beta2 = 9.990000e-01 epsilon = 9.9999999999999995E-7
        clip = 1.000000e+00 weight_decay = 0.000000e+00 {bias_correction}
        : (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>,
           tensor<f32>, tensor<f32>, tensor<i64>)
        -> (tensor<32xf32>, tensor<32xf32>, tensor<32xf32>)
    ```
  }];
  let arguments = (ins XLNet_F32Tensor:$param, XLNet_F32Tensor:$grad,
                       XLNet_F32Tensor:$m, XLNet_F32Tensor:$v,
                       XLNet_ScalarF32:$lr, XLNet_ScalarF32:$grad_norm,
                       XLNet_ScalarI64:$step, F64Attr:$beta1, F64Attr:$beta2,
                       F64Attr:$epsilon, F64Attr:$clip, F64Attr:$weight_decay,
                       UnitAttr:$bias_correction);
  let results = (outs XLNet_F32Tensor:$new_param, XLNet_F32Tensor:$new_m,
                      XLNet_F32Tensor:$new_v);
  let assemblyFormat = [{
    $param `,` $grad `,` $m `,` $v `lr` `(` $lr `)` `grad_norm` `(` $grad_norm `)`
    `step` `(` $step `)` `beta1` `=` $beta1 `beta2` `=` $beta2 `epsilon` `=` $epsilon
    `clip` `=` $clip `weight_decay` `=` $weight_decay attr-dict
    `:` functional-type(operands, results)
  }];
}

#endif // XLNET_OPS_TD
