//===- PlanTest.cpp - Plan parsing and verification -----------------------===//

#include "runtime/Plan.h"
#include "test/Runtime/TestUtil.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(plan.version, 1);
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

TEST(PlanTest, RejectsWrongFormatAndVersion) {
  json doc = qProjPlan().doc();
  doc["version"] = 2;
  EXPECT_EQ(parseError(doc.dump()),
            "plan: unsupported version 2 (this runtime reads version 1)");
  doc["version"] = 1;
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

} // namespace
