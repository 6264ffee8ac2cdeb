//===- GemmFallback.cpp - A fused GEMM epilogue, unfused -----------------===//

#include "runtime/device/GemmFallback.h"

#include <fmt/format.h>

#include <algorithm>

namespace xlnetc::rt::dev {

namespace {

/// XL_EPI_BLOCK and XL_EPI_DGELU_BLOCK of xlnetc_k_epilogue.cuh.
constexpr unsigned kBlock = 256, kDGeluBlock = 128;
/// The most blocks an epilogue launch takes; its grid-stride loop covers
/// the rest.
constexpr int64_t kMaxGrid = 65535;

} // namespace

ModuleSource gemmEpilogueModule() {
  ModuleSource src;
  src.name = "xlnetc_gemm_epilogue.cu";
  src.text = "#include \"xlnetc_prelude.cuh\"\n#include \"xlnetc_k_epilogue.cuh\"\n";
  return src;
}

int64_t gemmFallbackScratchBytes(const GemmDesc &desc) {
  return desc.cd == GemmType::BF16 ? gemmExtents(desc).cd * 4 : 0;
}

Status gemmFallback(const GemmDesc &desc, const GemmOperands &ops, DevPtr scratch,
                    GemmFallback &out) {
  if (desc.epilogue == GemmEpilogue::Default)
    return Status::error(fmt::format("{}: the default epilogue has no unfused form",
                                      describeGemm(desc)));
  const bool toScratch = desc.cd == GemmType::BF16;
  if (toScratch && desc.beta != 0.0f)
    return Status::error(fmt::format("{}: a bf16 D with beta != 0 has no unfused form (its "
                                     "f32 scratch GEMM cannot read a bf16 C)",
                                     describeGemm(desc)));
  out = GemmFallback();
  // The product alone, into D (f32) or into the f32 scratch (bf16 D).
  out.gemm = desc;
  out.gemm.epilogue = GemmEpilogue::Default;
  out.ops.a = ops.a;
  out.ops.b = ops.b;
  out.ops.c = ops.c;
  out.ops.d = ops.d;
  if (toScratch) {
    out.gemm.cd = GemmType::F32;
    out.ops.c = out.ops.d = scratch;
  }
  // Then the epilogue, from the product to D (and aux, and the bias).
  out.kernel = fmt::format("xl_gemm_epilogue_{}_{}", gemmEpilogueName(desc.epilogue),
                           gemmTypeName(desc.cd));
  const bool dgelu = desc.epilogue == GemmEpilogue::DGeluBGrad;
  const unsigned block = dgelu ? kDGeluBlock : kBlock;
  const int64_t threads = dgelu ? desc.m : desc.batch * desc.n * desc.m;
  out.dims.block[0] = block;
  out.dims.grid[0] = unsigned(std::clamp<int64_t>((threads + block - 1) / block, 1, kMaxGrid));
  out.args = {out.ops.d,         ops.bias,          ops.aux,         ops.d,
              uint64_t(desc.m),  uint64_t(desc.n),  uint64_t(desc.ldc),
              uint64_t(desc.batch), uint64_t(desc.strideC)};
  return Status::ok();
}

} // namespace xlnetc::rt::dev
