//===- Passes.td - xlnetc passes ---------------------------*- tablegen -*-===//
//
// Every xlnetc pass, grouped under banners, alphabetical within a group. The
// order they run in is written once, in Pipelines.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_PASSES_TD
#define XLNETC_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Transforms (xlnet -> xlnet)
//===----------------------------------------------------------------------===//

def AccumulateGradientsPass : Pass<"xlnet-accumulate-gradients", "::mlir::func::FuncOp"> {
  let summary = "Make a differentiated step one micro-batch of gradient accumulation";
  let description = [{
    Gradient accumulation runs a process's rows as several micro-batches,
    one after another, and updates once with the sum of their gradients
    (docs/Training.md "Gradient accumulation"). This pass makes the step
    one such micro-batch. The function gets two kinds of input:
    - `loss_count` (`tensor<f32>`): the predicted tokens (Σ target_mask) of
      all the micro-batches of the step. The `lm_loss_grad` divides by it
      instead of its own Σ target_mask, so each micro-batch's gradient is
      already weighted by its share of the tokens and the sum over the
      micro-batches is the gradient of the whole batch's loss.
    - `grad_acc.<param>`, one per parameter (its type): the sum of the
      gradients of the step's earlier micro-batches.

    Each `grad.<param>` result becomes `grad_acc.<param>` plus the
    micro-batch's gradient, an `xlnet.add` that `--xlnet-fuse-kernels`
    folds into the op writing the gradient where that op takes an init
    (a GEMM with beta 1): the sum is written by the backward itself, not
    by a pass of its own. `--xlnet-apply-optimizer{keep-gradients}` then
    updates from the accumulated gradients and keeps them as results.

    Requires `--xlnet-differentiate` first. Rejected: a function without
    `grad.*` results, one that already accumulates (it has a `loss_count`
    input), and one whose loss is not differentiated by exactly one
    `xlnet.lm_loss_grad`.
  }];
  let dependentDialects = ["::mlir::xlnet::XLNetDialect"];
}

def ApplyOptimizerPass : Pass<"xlnet-apply-optimizer", "::mlir::func::FuncOp"> {
  let summary = "Replace the gradient results by the official Adam update of every parameter";
  let description = [{
    Makes a differentiated step (results `grad.<param>`) a training step, as
    `model_utils.get_train_op` in the official code (semantics.md §8). The
    function gets the inputs `step` (updates already applied, `tensor<i64>`)
    and `adam_m.<param>`, `adam_v.<param>`; it computes the learning rate
    (`xlnet.lr_schedule`: linear warmup, then poly or cos decay to
    `learning-rate · min-lr-ratio`), the global gradient norm
    (`xlnet.global_norm`) and one `xlnet.adam_update` per parameter, clipping
    by the global norm. With `weight-decay` 0 the update is Adam with bias
    correction; otherwise the official AdamWeightDecayOptimizer (no bias
    correction) with decoupled decay on every parameter except LayerNorm
    weights and biases and the `.bias` parameters (the relative biases
    `r_w_bias`, `r_r_bias`, `r_s_bias` decay). The gradient results are
    replaced by `new.<param>`, `new.adam_m.<param>`, `new.adam_v.<param>`,
    `lr` and `grad_norm` (with `keep-gradients`, the gradient results
    stay too: a micro-batch step carries them to the next micro-batch).

    Requires `--xlnet-differentiate` first: a function without `grad.*`
    results, or with a gradient of an unknown parameter, is rejected.
  }];
  let options = [
    Option<"learningRate", "learning-rate", "double", "1e-4", "Peak learning rate">,
    Option<"warmupSteps", "warmup-steps", "int64_t", "0", "Linear warmup steps">,
    Option<"trainSteps", "train-steps", "int64_t", "1000", "Step at which the decay reaches its floor">,
    Option<"minLrRatio", "min-lr-ratio", "double", "0.0", "Floor of the decay as a fraction of the learning rate">,
    Option<"decay", "decay", "std::string", "\"poly\"", "Decay after warmup: poly (linear) or cos">,
    Option<"adamEpsilon", "adam-epsilon", "double", "1e-8", "Adam epsilon">,
    Option<"weightDecay", "weight-decay", "double", "0.0", "Decoupled weight decay (0: Adam with bias correction)">,
    Option<"clip", "clip", "double", "1.0", "Global-norm gradient clipping (<= 0: off)">,
    Option<"keepGradients", "keep-gradients", "bool", "false",
           "Keep the grad.<param> results (the accumulated gradients of --xlnet-accumulate-gradients) beside the update">
  ];
  let dependentDialects = ["::mlir::xlnet::XLNetDialect"];
}

def CompactMasksPass : Pass<"xlnet-compact-masks", "::mlir::func::FuncOp"> {
  let summary = "Fold the segment matrix and the permutation mask into the attention ops";
  let description = [{
    Every `xlnet.rel_attention` (and `rel_attention_grad`) whose `seg_mat` is
    an `xlnet.rel_segment` of the segment ids and whose `mask` is an
    `xlnet.rank_mask` of the permutation's ranks (or an `xlnet.packed_mask`
    of its bits) reads the segment ids (`i64 [B, S]`) and the ranks
    (`i64 [B, 2, S]`, or the bits `i64 [B, S, ceil(S/64)]`) instead: the
    kernels compute both masks on the fly (design/cuda.md §3), so no
    `[B, S, K]` mask is materialized. The `rel_segment`, `rank_mask` and
    `packed_mask` ops left without uses are erased. Attention ops with other
    masks (a dense `attn_mask` of a `perm_mask`) are left as they are.

    Rejected: a `rank_mask` or `packed_mask` whose stream is not the
    attention's (`content` without `rows`, `query` with them), masks whose
    `mlen` is not the attention's `K - S`, and a `rank_mask` or
    `packed_mask` still used by another op after the folding (no other op
    reads compact masks).
  }];
  let dependentDialects = ["::mlir::xlnet::XLNetDialect"];
}

def DecomposeLayersPass : Pass<"xlnet-decompose-layers", "::mlir::func::FuncOp"> {
  let summary = "Expand xlnet.two_stream_layer into memory, attention and FFN ops";
  let description = [{
    Replaces every `xlnet.two_stream_layer` by the ops it is made of:
    `mem_cache` (when mem_len > 0), `mem_concat` (when there is incoming
    memory), the head projections of q (both streams), k, v and k_r, two
    `rel_attention` (content stream over all positions with the content mask,
    query stream over the prediction rows with the query mask), two
    `post_attention` and two `ffn`. A stream whose result has no use is not
    built (the last layer's content stream in a training step: the loss
    reads the query stream, and the memory is the layer's input). (Dropout on pos_emb is applied once per
    step by the frontend, not per layer.)

    Requires static shapes: the intermediate types (keys `[B, K, N, H]`, ...)
    are computed from the operands'. A layer with a dynamic operand is
    rejected.
  }];
  let dependentDialects = ["::mlir::xlnet::XLNetDialect"];
}

def DifferentiatePass : Pass<"xlnet-differentiate", "::mlir::func::FuncOp"> {
  let summary = "Append the backward of the step's loss and return the gradient of every parameter";
  let description = [{
    Reverse-mode differentiation of a kernel-level step function: the result
    named `loss` (an `xlnet.lm_loss`) is differentiated with respect to every
    `xlnet.param` argument, and the gradients are returned as new results
    `grad.<param>`, in argument order. Each kernel op has one gradient rule
    (`lm_loss_grad`, `gemm` + `gemm_wgrad` + `bias_grad`, `activation_grad`,
    `dropout` with the forward's site, `add_layer_norm_grad`,
    `rel_attention_grad`, `mem_concat_grad`, `embedding_grad`,
    `mask_embedding_grad`); contributions to one value are summed with
    `xlnet.add`, so the tied embedding gets one gradient (input and output
    use summed). Memory is stop-gradient: `mem_cache` is not differentiated
    and `mem_concat` passes gradient to `h` only.

    Before the sweep every `dropout` and `rel_attention` gets a `site`
    attribute (a backward op reuses its forward's site, hence its random
    mask), and every `gemm` activation epilogue is split into a separate
    `xlnet.activation` so the pre-activation is available.

    Rejected: a function without a `loss` result, a loss that is not an
    `xlnet.lm_loss`, a function that already has `grad.*` results, an op
    without a gradient rule (model-level ops must be lowered first), and a
    parameter that does not influence the loss.
  }];
  let dependentDialects = ["::mlir::xlnet::XLNetDialect"];
}

def FuseKernelsPass : Pass<"xlnet-fuse-kernels", "::mlir::func::FuncOp"> {
  let summary = "Fold adds, GELU epilogues and bias gradients into the ops that make their operands";
  let description = [{
    The fusions both executors run, decided once (docs/Plan.md "Fused
    forms"), in this order:

    1. GELU forward: `gemm(x, w, bias) -> P; activation gelu_tanh(P) -> A`
       becomes one gemm returning `(A, aux = P)` (cuBLASLt's GELU_AUX_BIAS).
    2. GELU backward: `gemm(x, w) -> dA`, read only by `activation_grad
       gelu_tanh(dA, P) -> dP`, and a `bias_grad(dP) -> db` become one gemm
       `pre P {activation_grad = gelu_tanh}` returning `(dP, aux = db)`
       (DGELU_BGRAD).
    3. Accumulate: `gemm or gemm_wgrad(...) -> Y; add(X, Y) -> Z` becomes the
       GEMM with `init X` returning Z (beta 1).
    4. Add into: the same for `bias_grad`, `embedding_grad`,
       `mem_concat_grad` (result 0), `add_layer_norm_grad` (dgamma, dbeta)
       and `rel_attention_grad` (any result but dq): the op gets an init.
    5. Dropout inside LayerNorm: `y = dropout(h)` read only as the x of
       `add_layer_norm` and `add_layer_norm_grad` => they read h with
       `x_dropout` (y is never stored); the first `dropout` of an
       `add_layer_norm_grad`'s dsum becomes its fourth result
       (`dsum_dropout`). A `batch_shared` dropout is not fused (the fused
       dropouts' index counts batch rows).

    Random ops without a `site` get theirs first (the numbers the plan
    emitter would give them), so every dropout keeps its mask.

    3 and 4 need Y read by the add alone, X defined before Y's producer and
    a producer without an init for that result yet. 1 and 2 need the GEMM's
    output width (the aux matrix's leading dimension) to be a multiple of
    `aux-ld-multiple`. Every rewrite keeps the numbers: the fused kernels
    compute what the ops did, rounded the same way (the GEMM's beta 1 sums
    in the GEMM's order).

    Runs last, after `--xlnet-mixed-precision`; `xlnetc compile
    --emit=fused` prints its result.
  }];
  let options = [
    Option<"auxLdMultiple", "aux-ld-multiple", "int64_t", "8",
           "GELU epilogues only where the GEMM's output width is a multiple of this (cuBLASLt: 8)">,
    Option<"attentionGradInit", "attention-grad-init", "std::string", "\"tensor-core\"",
           "Which rel_attention_grad ops take inits: tensor-core (bf16, compact masks, d_head a "
           "multiple of 16 up to 128: the CUDA kernels that sum into inits), all, none">
  ];
  let dependentDialects = ["::mlir::xlnet::XLNetDialect"];
}

def LowerToKernelsPass : Pass<"xlnet-lower-to-kernels", "::mlir::func::FuncOp"> {
  let summary = "Lower model-level xlnet ops to kernel-level ops (one op = one plan step)";
  let description = [{
    `head_proj` and `lm_head` become `gemm`; `post_attention` becomes `gemm`
    (k_rank 2, transposed), `dropout` (if any) and `add_layer_norm`; `ffn`
    becomes a `gemm` with bias and activation epilogue, a `gemm` with bias,
    dropouts (if any) and `add_layer_norm`. Afterwards every op in the
    function maps to exactly one plan step.

    Requires layers to be decomposed first: a remaining
    `xlnet.two_stream_layer` is an error.
  }];
  let dependentDialects = ["::mlir::xlnet::XLNetDialect"];
}

def MixedPrecisionPass : Pass<"xlnet-mixed-precision", "::mlir::func::FuncOp"> {
  let summary = "Store activations and GEMM operands in bf16; keep parameters, gradients, optimizer state and losses in f32";
  let description = [{
    bf16 mixed precision (design/cuda.md §3): the results of the activation
    ops (`embedding`, `mask_embedding`, `rel_pos_encoding`, `mem_concat`,
    `gemm`, `rel_attention`, `add_layer_norm`, `dropout`, `activation`) and
    of the backward ops that produce an activation's gradient become bf16.
    GEMM operands are bf16: an f32 operand (a parameter) is read through one
    `xlnet.cast` per value, so the master weights stay f32; a GEMM's bias is
    cast too (a bias has its GEMM's output type, as cuBLASLt reads it). Kept
    f32: the
    parameters, every parameter gradient (`gemm_wgrad`, `bias_grad`,
    `embedding_grad`, `mask_embedding_grad`, the bias and segment gradients of
    `rel_attention_grad`, `dgamma`/`dbeta`, and their sums), Adam's moments,
    the learning rate, norms, losses and the carried memory (`mem_cache`).
    A bf16 value the function returns is cast back, so the signature, the
    checkpoints and the runtime's bindings do not change. Kernels accumulate
    in f32 whatever they store.

    Runs on kernel-level ops: a function that still has model-level ops is
    rejected.
  }];
  let dependentDialects = ["::mlir::xlnet::XLNetDialect"];
}

#endif // XLNETC_PASSES_TD
