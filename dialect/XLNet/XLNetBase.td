//===- XLNetBase.td - xlnet dialect definition -------------*- tablegen -*-===//
//
// The `xlnet` dialect: one XLNet pretraining step at the level of the official
// code (layers, masks, memory concatenation) and, after lowering, at the level
// of kernels (one op = one kernel or one library call).
//
//===----------------------------------------------------------------------===//

#ifndef XLNET_BASE_TD
#define XLNET_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def XLNet_Dialect : Dialect {
  let name = "xlnet";
  let cppNamespace = "::mlir::xlnet";
  let summary = "XLNet pretraining: two-stream relative attention, masks and memory";
  let description = [{
    The `xlnet` dialect expresses one XLNet pretraining step (permutation
    language modeling with two-stream relative attention and Transformer-XL
    segment memory) on ranked tensors.

    Layouts: activations are batch-major (`[B, S, D]`), per-head tensors are
    `[B, T, N, H]`, memories are time-major (`[M, B, D]`, as TensorFlow and
    HuggingFace store them), projection weights use the HuggingFace shapes
    (`[D, N, H]`). Masks are `i1` tensors where 1 means "may not attend".

    Dimension letters used in the op documentation: B batch, S segment length
    (qlen), M incoming memory length (mlen), K = M + S (klen), R = K + S
    (rlen), D d_model, N n_head, H d_head, I d_inner, V vocabulary, NP
    num_predict, T query rows, P positional-encoding copies (2 with bi_data).

    Ops come in two levels. Model-level ops (`two_stream_layer`, `head_proj`,
    `post_attention`, `ffn`, `lm_head`) are decomposed and lowered by passes;
    the remaining ops are kernel-level: each one becomes exactly one step of
    the executable plan.
  }];
  let useDefaultAttributePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def XLNet_Activation : I32EnumAttr<"Activation", "activation function", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"relu", 1>,
    I32EnumAttrCase<"gelu_tanh", 2>,
    I32EnumAttrCase<"gelu_erf", 3>]> {
  let cppNamespace = "::mlir::xlnet";
  let genSpecializedAttr = 0;
}
def XLNet_ActivationAttr : EnumAttr<XLNet_Dialect, XLNet_Activation, "activation">;

def XLNet_Stream : I32EnumAttr<"Stream", "attention stream", [
    I32EnumAttrCase<"query", 0>,
    I32EnumAttrCase<"content", 1>]> {
  let cppNamespace = "::mlir::xlnet";
  let genSpecializedAttr = 0;
}
def XLNet_StreamAttr : EnumAttr<XLNet_Dialect, XLNet_Stream, "stream">;

def XLNet_LRDecay : I32EnumAttr<"LRDecay", "learning-rate decay after warmup", [
    I32EnumAttrCase<"poly", 0>,
    I32EnumAttrCase<"cos", 1>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::xlnet";
}
def XLNet_LRDecayAttr : EnumAttr<XLNet_Dialect, XLNet_LRDecay, "lr_decay">;

//===----------------------------------------------------------------------===//
// Base classes and type constraints
//===----------------------------------------------------------------------===//

class XLNet_Op<string mnemonic, list<Trait> traits = []>
    : Op<XLNet_Dialect, mnemonic, traits> {
  let hasVerifier = 1;
}

def XLNet_F32Tensor : RankedTensorOf<[F32]>;
// An activation or an activation's gradient: f32, or bf16 once
// --xlnet-mixed-precision has run (parameters, their gradients, optimizer
// state and losses stay f32).
def XLNet_FloatTensor : RankedTensorOf<[F32, BF16]>;
def XLNet_I64Tensor : RankedTensorOf<[I64]>;
def XLNet_MaskTensor : RankedTensorOf<[I1]>;
// A mask operand of rel_attention(_grad): dense (i1 [B,S,K]) or compact
// (i64: seg_id [B,S], perm_rank [B,2,S]).
def XLNet_AttnMaskOperand : RankedTensorOf<[I1, I64]>;
def XLNet_ScalarF32 : 0DTensorOf<[F32]>;
def XLNet_ScalarI64 : 0DTensorOf<[I64]>;

#endif // XLNET_BASE_TD
