//===- PlanTest.cpp - Plan parsing and verification -----------------------===//

#include "runtime/exec/HostExecutor.h"
#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanDataflow.h"
#include "test/Runtime/TestUtil.h"

#include <gtest/gtest.h>

#include <functional>

using namespace xlnetc::rt;
using xlnetc::rt::test::PlanBuilder;
using nlohmann::json;

namespace {

/// A q-projection: x [2,4,8] · w [8,2,4] -> [2,4,2,4].
PlanBuilder qProjPlan(std::vector<int64_t> wShape = {8, 2, 4}) {
  PlanBuilder p;
  int x = p.buffer("f32", {2, 4, 8}, "input", "h");
  int w = p.buffer("f32", wShape, "param", "transformer.layer.0.rel_attn.q");
  int y = p.buffer("f32", {2, 4, 2, 4}, "temp", "", {"hidden"});
  p.step("gemm", {x, w}, {y},
         {{"k_rank", 1}, {"transpose_w", false}, {"activation", "none"}},
         "layer 0 q-proj");
  return p;
}

/// Parses `text` and returns the error message ("" on success).
std::string parseError(const std::string &text) {
  Plan plan;
  Status s = parsePlan(text, plan);
  return s ? "" : s.message();
}

TEST(PlanTest, ParsesAValidPlan) {
  Plan plan;
  Status s = parsePlan(qProjPlan().text(), plan);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(plan.version, 4);
  EXPECT_EQ(plan.function, "forward");
  ASSERT_EQ(plan.buffers.size(), 3u);
  EXPECT_EQ(plan.buffers[0].role, Buffer::Input);
  EXPECT_EQ(plan.buffers[0].name, "h");
  EXPECT_EQ(plan.buffers[1].role, Buffer::Param);
  EXPECT_EQ(plan.buffers[2].outputs, std::vector<std::string>{"hidden"});
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].kind, OpKind::Gemm);
  EXPECT_EQ(plan.steps[0].loc, "layer 0 q-proj");
  EXPECT_EQ(plan.steps[0].attrs.kRank, 1);
  EXPECT_EQ(plan.steps[0].in, (std::vector<int>{0, 1}));
}

/// The mixed-precision forms (version 3): bf16 temporaries, casts of the
/// f32 parameters, a GEMM on bf16 operands and bias, an f32 weight gradient.
PlanBuilder bf16Plan(bool castBias = true, const std::string &castTo = "bf16") {
  PlanBuilder p;
  int x = p.buffer("f32", {2, 4, 8}, "input", "h");
  int w = p.buffer("f32", {8, 6}, "param", "w");
  int b = p.buffer("f32", {6}, "param", "b");
  int x16 = p.buffer("bf16", {2, 4, 8}, "temp");
  int w16 = p.buffer(castTo, {8, 6}, "temp");
  int b16 = castBias ? p.buffer("bf16", {6}, "temp") : b;
  int y = p.buffer("bf16", {2, 4, 6}, "temp");
  int dw = p.buffer("f32", {8, 6}, "temp", "", {"grad.w"});
  int y32 = p.buffer("f32", {2, 4, 6}, "temp", "", {"hidden"});
  p.step("cast", {x}, {x16}, {}, "x");
  p.step("cast", {w}, {w16}, {}, "w");
  if (castBias)
    p.step("cast", {b}, {b16}, {}, "b");
  p.step("gemm", {x16, w16, b16}, {y},
         {{"k_rank", 1}, {"transpose_w", false}, {"activation", "none"}}, "proj");
  p.step("gemm_wgrad", {x16, y}, {dw}, {{"k_rank", 1}, {"transpose_w", false}}, "dw");
  p.step("cast", {y}, {y32}, {}, "out");
  return p;
}

TEST(PlanTest, MixedPrecisionBuffersAndCasts) {
  Plan plan;
  Status s = parsePlan(bf16Plan().text(), plan);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(plan.buffers[3].dtype, DType::BF16);
  EXPECT_EQ(plan.steps[0].kind, OpKind::Cast);
  // A GEMM's bias has its output's type (cuBLASLt's rule).
  EXPECT_EQ(parseError(bf16Plan(false).text()),
            "step 2 (gemm, loc 'proj'): input 2 (bias, buffer 2) is f32[6] but the output "
            "(buffer 5) is bf16[2, 4, 6]: a bias has its output's type");
  // A cast changes the dtype.
  EXPECT_EQ(parseError(bf16Plan(true, "f32").text()),
            "step 1 (cast, loc 'w'): output 0 (buffer 4) is f32[8, 6] like its input: a cast "
            "must change the dtype (f32 to bf16 or bf16 to f32)");
  // The optimizer and the losses take f32 only.
  PlanBuilder adam;
  int pr = adam.buffer("f32", {4}, "param", "p");
  int g = adam.buffer("bf16", {4}, "input", "g");
  int m = adam.buffer("f32", {4}, "input", "m");
  int lr = adam.buffer("f32", {}, "input", "lr");
  int st = adam.buffer("i64", {}, "input", "step");
  int o1 = adam.buffer("f32", {4}, "temp"), o2 = adam.buffer("f32", {4}, "temp"),
      o3 = adam.buffer("f32", {4}, "temp");
  adam.step("adam_update", {pr, g, m, m, lr, lr, st}, {o1, o2, o3},
            {{"beta1", 0.9}, {"beta2", 0.999}, {"epsilon", 1e-8}, {"clip", 1.0},
             {"weight_decay", 0.0}, {"bias_correction", true}},
            "adam");
  EXPECT_EQ(parseError(adam.text()),
            "step 0 (adam_update, loc 'adam'): input 1 (grad, buffer 1) must be f32[4], got "
            "bf16[4]");
}

TEST(PlanTest, HostExecutorRefusesBf16Plans) {
  Plan plan;
  ASSERT_TRUE(parsePlan(bf16Plan().text(), plan));
  TensorMap bindings, outputs;
  bindings["h"] = Tensor::zeros(DType::F32, {2, 4, 8});
  bindings["w"] = Tensor::zeros(DType::F32, {8, 6});
  bindings["b"] = Tensor::zeros(DType::F32, {6});
  Status s = executeHost(plan, bindings, outputs, ExecOptions{});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "this plan stores bf16 (buffer 3, bf16[2, 4, 8]): it was compiled "
                         "with --precision bf16, which runs on --device cuda or emu; the host "
                         "executor runs fp32 plans only");
}

TEST(PlanTest, RejectsWrongFormatAndVersion) {
  json doc = qProjPlan().doc();
  doc["version"] = 3; // before the fused forms' inits and epilogues
  EXPECT_EQ(parseError(doc.dump()),
            "plan: unsupported version 3 (this runtime reads version 4)");
  doc["version"] = 5;
  EXPECT_EQ(parseError(doc.dump()),
            "plan: unsupported version 5 (this runtime reads version 4)");
  doc["version"] = "4";
  EXPECT_EQ(parseError(doc.dump()),
            "plan: unsupported version \"4\" (this runtime reads version 4)");
  doc.erase("version");
  EXPECT_EQ(parseError(doc.dump()),
            "plan: unsupported version (missing) (this runtime reads version "
            "4)");
  doc["version"] = 4;
  doc["format"] = "other";
  EXPECT_EQ(parseError(doc.dump()),
            "plan: 'format' must be \"xlnetc-plan\", got \"other\"");
  EXPECT_EQ(parseError("{oops"), "plan: not valid JSON");
}

TEST(PlanTest, RejectsUnknownOp) {
  json doc = qProjPlan().doc();
  doc["steps"][0]["op"] = "matmul";
  EXPECT_EQ(parseError(doc.dump()),
            "step 0 (matmul, loc 'layer 0 q-proj'): unknown op 'matmul'");
}

TEST(PlanTest, RejectsBadBufferIds) {
  json doc = qProjPlan().doc();
  doc["steps"][0]["in"] = {0, 7};
  EXPECT_EQ(parseError(doc.dump()),
            "step 0 (gemm, loc 'layer 0 q-proj'): 'in' names buffer 7, but "
            "the plan has buffers 0..2");
  doc = qProjPlan().doc();
  doc["buffers"][1]["id"] = 5;
  EXPECT_EQ(parseError(doc.dump()),
            "buffer 1: 'id' must be 1 (ids are 0..n-1 in order), got 5");
}

TEST(PlanTest, RejectsGemmContractionMismatch) {
  // w's first dim is 6 but x's last dim is 8.
  std::string e = parseError(qProjPlan({6, 2, 4}).text());
  EXPECT_EQ(e, "step 0 (gemm, loc 'layer 0 q-proj'): contraction dims "
               "disagree: the last 1 dims of input 0 (x, buffer 0) are [8] but "
               "the first 1 dims of input 1 (w, buffer 1) are [6] "
               "(transpose_w false)");
}

TEST(PlanTest, RejectsGemmOutputShape) {
  json doc = qProjPlan().doc();
  doc["buffers"][2]["shape"] = {2, 4, 8};
  EXPECT_EQ(parseError(doc.dump()),
            "step 0 (gemm, loc 'layer 0 q-proj'): output 0 (buffer 2) is "
            "f32[2, 4, 8] but must be f32[2, 4, 2, 4] (x's leading dims "
            "followed by w's N dims)");
}

TEST(PlanTest, RejectsMissingAttributeAndArity) {
  json doc = qProjPlan().doc();
  doc["steps"][0]["attrs"].erase("transpose_w");
  EXPECT_EQ(parseError(doc.dump()),
            "step 0 (gemm, loc 'layer 0 q-proj'): missing attribute "
            "'transpose_w'");
  doc = qProjPlan().doc();
  doc["steps"][0]["in"] = {0};
  EXPECT_EQ(parseError(doc.dump()),
            "step 0 (gemm, loc 'layer 0 q-proj'): takes 2 to 3 inputs, got 1");
}

TEST(PlanTest, RejectsWrongDtype) {
  PlanBuilder p;
  int ids = p.buffer("f32", {2, 3}, "input", "input_k");
  int tab = p.buffer("f32", {10, 4}, "param", "emb");
  int out = p.buffer("f32", {2, 3, 4}, "temp");
  p.step("embedding", {ids, tab}, {out}, json::object(), "word emb");
  EXPECT_EQ(parseError(p.text()),
            "step 0 (embedding, loc 'word emb'): input 0 (ids, buffer 0) must "
            "be i64, got f32[2, 3]");
}

TEST(PlanTest, TempsAreWrittenOnceBeforeRead) {
  PlanBuilder p;
  int x = p.buffer("f32", {4}, "input", "x");
  int t = p.buffer("f32", {4}, "temp");
  int u = p.buffer("f32", {4}, "temp", "", {"y"});
  p.step("dropout", {t}, {u}, {{"rate", 0.0}}, "reads early");
  p.step("dropout", {x}, {t}, {{"rate", 0.0}}, "writes late");
  EXPECT_EQ(parseError(p.text()),
            "step 0 (dropout, loc 'reads early'): input 0 reads temp buffer 1 "
            "before any step writes it");

  PlanBuilder q;
  x = q.buffer("f32", {4}, "input", "x");
  t = q.buffer("f32", {4}, "temp", "", {"y"});
  q.step("dropout", {x}, {t}, {{"rate", 0.0}}, "first");
  q.step("dropout", {x}, {t}, {{"rate", 0.0}}, "second");
  EXPECT_EQ(parseError(q.text()),
            "step 1 (dropout, loc 'second'): output 0 writes temp buffer 1, "
            "already written by step 0");

  PlanBuilder r;
  x = r.buffer("f32", {4}, "input", "x");
  int y = r.buffer("f32", {4}, "input", "y");
  r.step("dropout", {x}, {y}, {{"rate", 0.0}}, "clobber");
  EXPECT_EQ(parseError(r.text()),
            "step 0 (dropout, loc 'clobber'): output 0 writes input buffer 1 "
            "('y'); only temps are written");
}

TEST(PlanTest, ChecksRelAttentionShapes) {
  // B=1, S=2, M=1 -> K=3, R=5, N=1, H=2; k_r has R=4 (wrong).
  PlanBuilder p;
  int q = p.buffer("f32", {1, 2, 1, 2}, "input", "q");
  int k = p.buffer("f32", {1, 3, 1, 2}, "input", "k");
  int v = p.buffer("f32", {1, 3, 1, 2}, "input", "v");
  int kr = p.buffer("f32", {1, 4, 1, 2}, "input", "k_r");
  int se = p.buffer("f32", {2, 1, 2}, "input", "seg_embed");
  int rw = p.buffer("f32", {1, 2}, "input", "rw");
  int rr = p.buffer("f32", {1, 2}, "input", "rr");
  int rs = p.buffer("f32", {1, 2}, "input", "rs");
  int sm = p.buffer("bool", {1, 2, 3}, "input", "seg_mat");
  int mk = p.buffer("bool", {1, 2, 3}, "input", "mask");
  int o = p.buffer("f32", {1, 2, 1, 2}, "temp", "", {"o"});
  p.step("rel_attention", {q, k, v, kr, se, rw, rr, rs, sm, mk}, {o},
         {{"scale", 0.5}}, "layer 0 h-attn");
  EXPECT_EQ(parseError(p.text()),
            "step 0 (rel_attention, loc 'layer 0 h-attn'): input 3 (k_r, "
            "buffer 3) must be f32[1, 5, 1, 2], got f32[1, 4, 1, 2]");
}

TEST(PlanTest, ChecksMemCacheLength) {
  // M=3, reuse 2, mem_len 4 -> L = min(4, 5) = 4, declared 5.
  PlanBuilder p;
  int mems = p.buffer("f32", {3, 2, 8}, "input", "mems.0");
  int h = p.buffer("f32", {2, 4, 8}, "input", "h");
  int out = p.buffer("f32", {5, 2, 8}, "temp", "", {"new_mems.0"});
  p.step("mem_cache", {mems, h}, {out}, {{"reuse_len", 2}, {"mem_len", 4}},
         "cache 0");
  EXPECT_EQ(parseError(p.text()),
            "step 0 (mem_cache, loc 'cache 0'): output 0 (buffer 2) is "
            "f32[5, 2, 8] but must be f32[4, 2, 8] (L = min(mem_len, M + "
            "reuse_len))");
}

TEST(PlanTest, RelPosEncodingShapeAndNegativeClampLen) {
  // clamp_len -1 (as in the configs) means no clamping; R = klen + qlen = 7.
  PlanBuilder p;
  int pos = p.buffer("f32", {2, 7, 8}, "temp", "", {"pos"});
  p.step("rel_pos_encoding", {}, {pos},
         {{"klen", 4}, {"qlen", 3}, {"clamp_len", -1}, {"bi_data", true}},
         "pos");
  EXPECT_EQ(parseError(p.text()), "");
  nlohmann::json doc = p.doc();
  doc["steps"][0]["attrs"]["bi_data"] = false;
  EXPECT_EQ(parseError(doc.dump()),
            "step 0 (rel_pos_encoding, loc 'pos'): output 0 (buffer 0) is "
            "f32[2, 7, 8] but must be f32[1, 7, ?] (P = 2 if bi_data else 1, "
            "R = klen + qlen)");
}

//===----------------------------------------------------------------------===//
// Backward and optimizer ops (version 2)
//===----------------------------------------------------------------------===//

/// One step of every backward and optimizer op but rel_attention_grad, with
/// consistent shapes; tests break one thing at a time. Buffer and step
/// indices are named in the comments.
PlanBuilder trainingOpsPlan() {
  PlanBuilder p;
  int ids = p.buffer("i64", {2, 3}, "input", "input_k");           // 0
  int dh = p.buffer("f32", {2, 3, 4}, "input", "dh");              // 1
  int demb = p.buffer("f32", {10, 4}, "temp", "", {"demb"});       // 2
  int dg = p.buffer("f32", {2, 2, 4}, "input", "dg");              // 3
  int dme = p.buffer("f32", {1, 1, 4}, "temp", "", {"dme"});       // 4
  int dcat = p.buffer("f32", {2, 5, 4}, "input", "dcat");          // 5
  int dhcat = p.buffer("f32", {2, 3, 4}, "temp", "", {"dhcat"});   // 6
  int x = p.buffer("f32", {2, 3, 4}, "input", "x");                // 7
  int act = p.buffer("f32", {2, 3, 4}, "temp", "", {"act"});       // 8
  int dact = p.buffer("f32", {2, 3, 4}, "temp", "", {"dact"});     // 9
  int dy = p.buffer("f32", {2, 3, 2, 3}, "input", "dy");           // 10
  int dw = p.buffer("f32", {4, 2, 3}, "temp", "", {"dw"});         // 11
  int db = p.buffer("f32", {6}, "temp", "", {"db"});               // 12
  int gamma = p.buffer("f32", {4}, "param", "gamma");              // 13
  int dsum = p.buffer("f32", {2, 3, 4}, "temp", "", {"dsum"});     // 14
  int dgam = p.buffer("f32", {4}, "temp", "", {"dgamma"});         // 15
  int dbet = p.buffer("f32", {4}, "temp", "", {"dbeta"});          // 16
  int logits = p.buffer("f32", {2, 2, 5}, "input", "logits");      // 17
  int tgt = p.buffer("i64", {2, 2}, "input", "target");            // 18
  int tmask = p.buffer("f32", {2, 2}, "input", "target_mask");     // 19
  int dlog = p.buffer("f32", {2, 2, 5}, "temp", "", {"dlogits"});  // 20
  int sum = p.buffer("f32", {2, 3, 4}, "temp", "", {"sum"});       // 21
  int step = p.buffer("i64", {}, "input", "step");                 // 22
  int lr = p.buffer("f32", {}, "temp", "", {"lr"});                // 23
  int norm = p.buffer("f32", {}, "temp", "", {"norm"});            // 24
  int m = p.buffer("f32", {4, 2, 3}, "input", "m");                // 25
  int v = p.buffer("f32", {4, 2, 3}, "input", "v");                // 26
  int w = p.buffer("f32", {4, 2, 3}, "param", "w");                // 27
  int w2 = p.buffer("f32", {4, 2, 3}, "temp", "", {"w'"});         // 28
  int m2 = p.buffer("f32", {4, 2, 3}, "temp", "", {"m'"});         // 29
  int v2 = p.buffer("f32", {4, 2, 3}, "temp", "", {"v'"});         // 30
  p.step("embedding_grad", {ids, dh}, {demb}, json::object(), "emb");  // 0
  p.step("mask_embedding_grad", {dg}, {dme}, json::object(), "me");    // 1
  p.step("mem_concat_grad", {dcat}, {dhcat}, json::object(), "cat");   // 2
  p.step("activation", {x}, {act}, {{"activation", "gelu_tanh"}}, "act");
  p.step("activation_grad", {dh, x}, {dact}, {{"activation", "relu"}},
         "dact");                                                      // 4
  p.step("gemm_wgrad", {x, dy}, {dw},
         {{"k_rank", 1}, {"transpose_w", false}}, "q wgrad");          // 5
  p.step("bias_grad", {dy}, {db}, json::object(), "bias");             // 6
  p.step("add_layer_norm_grad", {dh, x, x, gamma}, {dsum, dgam, dbet},
         {{"eps", 1e-12}}, "ln");                                      // 7
  p.step("lm_loss_grad", {logits, tgt, tmask}, {dlog}, json::object(),
         "loss");                                                      // 8
  p.step("add", {dh, x}, {sum}, json::object(), "acc");                // 9
  p.step("lr_schedule", {step}, {lr},
         {{"learning_rate", 1e-4},
          {"warmup_steps", 10},
          {"train_steps", 100},
          {"min_lr_ratio", 0.0},
          {"decay", "cos"}},
         "lr");                                                        // 10
  p.step("global_norm", {dw, db, dsum}, {norm}, json::object(), "norm");
  p.step("adam_update", {w, dw, m, v, lr, norm, step}, {w2, m2, v2},
         {{"beta1", 0.9},
          {"beta2", 0.999},
          {"epsilon", 1e-6},
          {"clip", 1.0},
          {"weight_decay", 0.01},
          {"bias_correction", false}},
         "adam w");                                                    // 12
  return p;
}

TEST(PlanTest, ParsesEveryBackwardAndOptimizerOp) {
  Plan plan;
  Status s = parsePlan(trainingOpsPlan().text(), plan);
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(plan.steps.size(), 13u);
  const OpKind kinds[] = {
      OpKind::EmbeddingGrad, OpKind::MaskEmbeddingGrad, OpKind::MemConcatGrad,
      OpKind::ActivationOp,  OpKind::ActivationGrad,    OpKind::GemmWgrad,
      OpKind::BiasGrad,      OpKind::AddLayerNormGrad,  OpKind::LmLossGrad,
      OpKind::Add,           OpKind::LrSchedule,        OpKind::GlobalNorm,
      OpKind::AdamUpdate};
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    EXPECT_EQ(plan.steps[i].kind, kinds[i]) << i;
    EXPECT_EQ(plan.steps[i].op, opName(kinds[i])) << i;
  }
  EXPECT_EQ(plan.steps[3].attrs.activation, Activation::GeluTanh);
  EXPECT_EQ(plan.steps[4].attrs.activation, Activation::Relu);
  const StepAttrs &lr = plan.steps[10].attrs;
  EXPECT_EQ(lr.learningRate, 1e-4);
  EXPECT_EQ(lr.warmupSteps, 10);
  EXPECT_EQ(lr.trainSteps, 100);
  EXPECT_EQ(lr.minLrRatio, 0.0);
  EXPECT_EQ(lr.decay, LrDecay::Cos);
  const StepAttrs &adam = plan.steps[12].attrs;
  EXPECT_EQ(adam.beta1, 0.9);
  EXPECT_EQ(adam.beta2, 0.999);
  EXPECT_EQ(adam.epsilon, 1e-6);
  EXPECT_EQ(adam.clip, 1.0);
  EXPECT_EQ(adam.weightDecay, 0.01);
  EXPECT_FALSE(adam.biasCorrection);
  EXPECT_EQ(plan.steps[11].in.size(), 3u);
}

/// The error of trainingOpsPlan() after `edit`.
std::string trainingOpsError(const std::function<void(json &)> &edit) {
  json doc = trainingOpsPlan().doc();
  edit(doc);
  return parseError(doc.dump());
}

TEST(PlanTest, RejectsBackwardOpShapes) {
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["buffers"][11]["shape"] = {4, 6};
            }),
            "step 5 (gemm_wgrad, loc 'q wgrad'): output 0 (buffer 11) is "
            "f32[4, 6] but must be f32[4, 2, 3] (x's last k_rank dims, then "
            "dy's trailing dims: the forward's w)");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["steps"][5]["attrs"]["transpose_w"] = true;
            }),
            "step 5 (gemm_wgrad, loc 'q wgrad'): output 0 (buffer 11) is "
            "f32[4, 2, 3] but must be f32[2, 3, 4] (dy's trailing dims, then "
            "x's last k_rank dims: the forward's w)");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["buffers"][10]["shape"] = {2, 4, 2, 3};
            }),
            "step 5 (gemm_wgrad, loc 'q wgrad'): input 1 (dy, buffer 10) dim "
            "1 is 4 but dim 1 of x (a leading dim) is 3 (f32[2, 4, 2, 3])");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["buffers"][1]["shape"] = {2, 4, 4};
            }),
            "step 0 (embedding_grad, loc 'emb'): input 1 (dout, buffer 1) "
            "must be f32[2, 3, ?], got f32[2, 4, 4]");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["buffers"][4]["shape"] = {1, 4};
            }),
            "step 1 (mask_embedding_grad, loc 'me'): output 0 (buffer 4) is "
            "f32[1, 4] but must be f32[1, 1, 4] (mask_emb [1, 1, D])");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["buffers"][6]["shape"] = {2, 6, 4};
            }),
            "step 2 (mem_concat_grad, loc 'cat'): output 0 (buffer 6) has S "
            "= 6 rows but input 0 (dout, buffer 5) has only K = 5");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["buffers"][9]["shape"] = {2, 3, 5};
            }),
            "step 4 (activation_grad, loc 'dact'): output 0 (buffer 9) is "
            "f32[2, 3, 5] but must be f32[2, 3, 4]");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["buffers"][12]["shape"] = {5};
            }),
            "step 6 (bias_grad, loc 'bias'): output 0 (buffer 12) is f32[5] "
            "with 5 elements, but no trailing dims of input 0 (dy, buffer "
            "10) have 5 elements");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["buffers"][15]["shape"] = {5};
            }),
            "step 7 (add_layer_norm_grad, loc 'ln'): output 1 (buffer 15) is "
            "f32[5] but must be f32[4] (dsum like x, dgamma and dbeta like "
            "gamma)");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["buffers"][20]["shape"] = {2, 2};
            }),
            "step 8 (lm_loss_grad, loc 'loss'): output 0 (buffer 20) is "
            "f32[2, 2] but must be f32[2, 2, 5]");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["steps"][9]["in"] = {1, 3};
            }),
            "step 9 (add, loc 'acc'): input 1 (b, buffer 3) must be "
            "f32[2, 3, 4], got f32[2, 2, 4]");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["buffers"][22]["shape"] = {1};
            }),
            "step 10 (lr_schedule, loc 'lr'): input 0 (step, buffer 22) must "
            "be i64[], got i64[1]");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["steps"][11]["in"] = {11, 18};
            }),
            "step 11 (global_norm, loc 'norm'): input 1 (g, buffer 18) must "
            "be f32, got i64[2, 2]");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["buffers"][25]["shape"] = {4, 6};
            }),
            "step 12 (adam_update, loc 'adam w'): input 2 (m, buffer 25) "
            "must be f32[4, 2, 3], got f32[4, 6]");
  EXPECT_EQ(trainingOpsError([](json &d) {
              d["steps"][12]["in"][4] = 24; // the norm as lr is fine
              d["steps"][12]["in"][5] = 12; // but db is not a scalar
            }),
            "step 12 (adam_update, loc 'adam w'): input 5 (grad_norm, buffer "
            "12) must be f32[], got f32[6]");
}

TEST(PlanTest, RejectsBackwardOpArity) {
  EXPECT_EQ(trainingOpsError(
                [](json &d) { d["steps"][11]["in"] = json::array(); }),
            "step 11 (global_norm, loc 'norm'): takes at least 1 input, got 0");
  EXPECT_EQ(trainingOpsError([](json &d) { d["steps"][12]["in"].erase(6); }),
            "step 12 (adam_update, loc 'adam w'): takes 7 inputs, got 6");
  EXPECT_EQ(trainingOpsError([](json &d) { d["steps"][12]["out"].erase(2); }),
            "step 12 (adam_update, loc 'adam w'): has 3 outputs, got 2");
  EXPECT_EQ(trainingOpsError([](json &d) { d["steps"][7]["out"] = {14}; }),
            "step 7 (add_layer_norm_grad, loc 'ln'): has 3 to 4 outputs, got 1");
  EXPECT_EQ(trainingOpsError([](json &d) { d["steps"][6]["in"] = {10, 10}; }),
            "step 6 (bias_grad, loc 'bias'): takes 1 inputs, got 2");
}

TEST(PlanTest, RejectsBadBackwardAndOptimizerAttrs) {
  auto attrError = [](size_t step, const char *key, json value) {
    return trainingOpsError([&](json &d) {
      if (value.is_null())
        d["steps"][step]["attrs"].erase(key);
      else
        d["steps"][step]["attrs"][key] = value;
    });
  };
  EXPECT_EQ(attrError(4, "activation", "swish"),
            "step 4 (activation_grad, loc 'dact'): attribute 'activation' must be "
            "\"none\", \"relu\", \"gelu_tanh\" or \"gelu_erf\", got \"swish\"");
  EXPECT_EQ(attrError(3, "activation", nullptr),
            "step 3 (activation, loc 'act'): missing attribute 'activation'");
  EXPECT_EQ(attrError(5, "k_rank", 0),
            "step 5 (gemm_wgrad, loc 'q wgrad'): attribute 'k_rank' must be "
            "in [1, 8], got 0");
  EXPECT_EQ(attrError(7, "eps", -1.0),
            "step 7 (add_layer_norm_grad, loc 'ln'): attribute 'eps' must be "
            "a finite number >= 0, got -1");
  // runtime/plan/PlanAttrs.def is the one list of keys: a key an op does not take
  // (a writer spelling it differently) is an error, not ignored.
  EXPECT_EQ(attrError(5, "transposeW", true),
            "step 5 (gemm_wgrad, loc 'q wgrad'): unknown attribute 'transposeW' "
            "(gemm_wgrad takes k_rank, transpose_w)");
  EXPECT_EQ(attrError(6, "eps", 1e-5),
            "step 6 (bias_grad, loc 'bias'): unknown attribute 'eps' (bias_grad "
            "takes no attributes)");
  EXPECT_EQ(attrError(7, "x_dropout_site", 3),
            "step 7 (add_layer_norm_grad, loc 'ln'): attributes 'x_dropout_rate' "
            "and 'x_dropout_site' come together");
  EXPECT_EQ(attrError(10, "decay", "exp"),
            "step 10 (lr_schedule, loc 'lr'): attribute 'decay' must be "
            "\"poly\" or \"cos\", got \"exp\"");
  EXPECT_EQ(attrError(10, "warmup_steps", -1),
            "step 10 (lr_schedule, loc 'lr'): attribute 'warmup_steps' must "
            "be >= 0, got -1");
  EXPECT_EQ(attrError(10, "min_lr_ratio", 2.0),
            "step 10 (lr_schedule, loc 'lr'): attribute 'min_lr_ratio' must "
            "be in [0, 1], got 2");
  EXPECT_EQ(attrError(10, "learning_rate", nullptr),
            "step 10 (lr_schedule, loc 'lr'): missing attribute "
            "'learning_rate'");
  EXPECT_EQ(attrError(12, "beta1", 1.0),
            "step 12 (adam_update, loc 'adam w'): attribute 'beta1' must be "
            "in [0, 1), got 1");
  EXPECT_EQ(attrError(12, "epsilon", -1e-6),
            "step 12 (adam_update, loc 'adam w'): attribute 'epsilon' must be "
            "a finite number >= 0, got -1e-06");
  EXPECT_EQ(attrError(12, "clip", "1"),
            "step 12 (adam_update, loc 'adam w'): attribute 'clip' must be a "
            "number, got \"1\"");
  EXPECT_EQ(attrError(12, "bias_correction", 1),
            "step 12 (adam_update, loc 'adam w'): attribute 'bias_correction' "
            "must be true or false, got 1");
  EXPECT_EQ(attrError(12, "bias_correction", true),
            "step 12 (adam_update, loc 'adam w'): attribute 'weight_decay' "
            "must be 0 when 'bias_correction' is true (got 0.01); decoupled "
            "weight decay is the uncorrected variant");
}

/// rel_attention_grad with B=1, S=2, M=1 (K=3, R=5), N=1, H=2.
PlanBuilder relAttentionGradPlan() {
  PlanBuilder p;
  int dout = p.buffer("f32", {1, 2, 1, 2}, "input", "dout");  // 0
  int q = p.buffer("f32", {1, 2, 1, 2}, "input", "q");        // 1
  int k = p.buffer("f32", {1, 3, 1, 2}, "input", "k");        // 2
  int v = p.buffer("f32", {1, 3, 1, 2}, "input", "v");        // 3
  int kr = p.buffer("f32", {1, 5, 1, 2}, "input", "k_r");     // 4
  int se = p.buffer("f32", {2, 1, 2}, "input", "seg_embed");  // 5
  int rw = p.buffer("f32", {1, 2}, "input", "rw");            // 6
  int rr = p.buffer("f32", {1, 2}, "input", "rr");            // 7
  int rs = p.buffer("f32", {1, 2}, "input", "rs");            // 8
  int sm = p.buffer("bool", {1, 2, 3}, "input", "seg_mat");   // 9
  int mk = p.buffer("bool", {1, 2, 3}, "input", "mask");      // 10
  std::vector<int> outs = {
      p.buffer("f32", {1, 2, 1, 2}, "temp", "", {"dq"}),  // 11
      p.buffer("f32", {1, 3, 1, 2}, "temp", "", {"dk"}),  // 12
      p.buffer("f32", {1, 3, 1, 2}, "temp", "", {"dv"}),  // 13
      p.buffer("f32", {1, 5, 1, 2}, "temp", "", {"dkr"}), // 14
      p.buffer("f32", {2, 1, 2}, "temp", "", {"dse"}),    // 15
      p.buffer("f32", {1, 2}, "temp", "", {"drw"}),       // 16
      p.buffer("f32", {1, 2}, "temp", "", {"drr"}),       // 17
      p.buffer("f32", {1, 2}, "temp", "", {"drs"})};      // 18
  p.step("rel_attention_grad", {dout, q, k, v, kr, se, rw, rr, rs, sm, mk},
         outs, {{"scale", 0.5}, {"dropatt", 0.1}, {"dropout_site", 3}},
         "layer 0 h-attn grad");
  return p;
}

TEST(PlanTest, ChecksRelAttentionGrad) {
  Plan plan;
  Status s = parsePlan(relAttentionGradPlan().text(), plan);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(plan.steps[0].kind, OpKind::RelAttentionGrad);
  EXPECT_EQ(plan.steps[0].attrs.scale, 0.5);
  EXPECT_EQ(plan.steps[0].attrs.dropatt, 0.1);
  EXPECT_EQ(plan.steps[0].attrs.dropoutSite, 3);

  json doc = relAttentionGradPlan().doc();
  doc["buffers"][14]["shape"] = {1, 4, 1, 2};
  EXPECT_EQ(parseError(doc.dump()),
            "step 0 (rel_attention_grad, loc 'layer 0 h-attn grad'): output 3 "
            "(buffer 14) is f32[1, 4, 1, 2] but must be f32[1, 5, 1, 2] (the "
            "type of the matching rel_attention operand)");
  doc = relAttentionGradPlan().doc();
  doc["buffers"][0]["shape"] = {1, 2, 1, 3};
  EXPECT_EQ(parseError(doc.dump()),
            "step 0 (rel_attention_grad, loc 'layer 0 h-attn grad'): input 0 "
            "(dout, buffer 0) must be f32[1, 2, 1, 2], got f32[1, 2, 1, 3]");
  doc = relAttentionGradPlan().doc();
  doc["buffers"][4]["shape"] = {1, 4, 1, 2};
  EXPECT_EQ(parseError(doc.dump()),
            "step 0 (rel_attention_grad, loc 'layer 0 h-attn grad'): input 4 "
            "(k_r, buffer 4) must be f32[1, 5, 1, 2], got f32[1, 4, 1, 2]");
  doc = relAttentionGradPlan().doc();
  doc["steps"][0]["out"].erase(7);
  EXPECT_EQ(parseError(doc.dump()),
            "step 0 (rel_attention_grad, loc 'layer 0 h-attn grad'): has 8 "
            "outputs, got 7");
  doc = relAttentionGradPlan().doc();
  doc["steps"][0]["in"].erase(0); // forgot dout: q's shape for dout, ...
  EXPECT_EQ(parseError(doc.dump()),
            "step 0 (rel_attention_grad, loc 'layer 0 h-attn grad'): takes 11 "
            "to 12 inputs, got 10");
  doc = relAttentionGradPlan().doc();
  doc["steps"][0]["attrs"]["dropatt"] = 1.0;
  EXPECT_EQ(parseError(doc.dump()),
            "step 0 (rel_attention_grad, loc 'layer 0 h-attn grad'): "
            "attribute 'dropatt' must be in [0, 1), got 1");
}

/// The dataflow helper: writers, readers in order (an init read as an
/// input, a buffer read twice listed twice), last readers, returned buffers.
TEST(PlanTest, DataflowCountsInitsAndReturnedBuffers) {
  test::PlanBuilder p;
  int x = p.buffer("f32", {2, 3}, "input", "x");
  int w = p.buffer("f32", {3, 4}, "param", "w");
  int r = p.buffer("f32", {2, 4}, "input", "r");
  int y = p.buffer("f32", {2, 4}, "temp");
  int z = p.buffer("f32", {2, 4}, "temp", "", {"z"});
  const json gemm = {{"k_rank", 1}, {"transpose_w", false}, {"activation", "none"}};
  p.step("gemm", {x, w}, {y}, gemm, "test", {r});
  p.step("add", {y, y}, {z});
  Plan plan;
  Status st = parsePlan(p.text(), plan);
  ASSERT_TRUE(st) << st.message();
  const PlanDataflow df = planDataflow(plan);
  EXPECT_EQ(df.writer, (std::vector<int>{-1, -1, -1, 0, 1}));
  EXPECT_EQ(df.readers[size_t(r)], std::vector<size_t>{0}) << "the init is read";
  EXPECT_EQ(df.readers[size_t(y)], (std::vector<size_t>{1, 1}));
  EXPECT_EQ(df.lastReader, (std::vector<int>{0, 0, 0, 1, -1}));
  EXPECT_EQ(df.uses(y), 2u);
  EXPECT_EQ(df.uses(z), 1u) << "returned";
}

} // namespace
