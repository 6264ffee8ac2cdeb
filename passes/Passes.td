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

def DecomposeLayersPass : Pass<"xlnet-decompose-layers", "::mlir::func::FuncOp"> {
  let summary = "Expand xlnet.two_stream_layer into memory, attention and FFN ops";
  let description = [{
    Replaces every `xlnet.two_stream_layer` by the ops it is made of:
    `mem_cache` (when mem_len > 0), `mem_concat` (when there is incoming
    memory), the head projections of q (both streams), k, v and k_r, two
    `rel_attention` (content stream over all positions with the content mask,
    query stream over the prediction rows with the query mask), two
    `post_attention` and two `ffn`. (Dropout on pos_emb is applied once per
    step by the frontend, not per layer.)

    Requires static shapes: the intermediate types (keys `[B, K, N, H]`, ...)
    are computed from the operands'. A layer with a dynamic operand is
    rejected.
  }];
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

#endif // XLNETC_PASSES_TD
