//===- AttentionTc.h - Launch geometry of the tensor-core attention -------===//
//
// The host side of xlnetc_k_attention_tc.cuh: which head sizes the
// tensor-core forward takes, its block, rows per tile and dynamic shared
// memory. The device side's constants are XlAttnTc and XlAttnTcSmem<H>; the
// emitted source static_asserts that XlAttnTcSmem<H>::kBytes equals
// attnTcSmemBytes(H), so the two cannot drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DEVICE_ATTENTIONTC_H
#define XLNETC_RUNTIME_DEVICE_ATTENTIONTC_H

#include <cstdint>

namespace xlnetc::rt::dev {

constexpr int kAttnTcBlock = 128; ///< 4 warps
constexpr int kAttnTcRows = 64;   ///< query rows per tile (16 per warp)

/// Whether the tensor-core forward takes head size H (the mma's k is 16;
/// larger heads would not fit its registers).
constexpr bool attnTcSupports(int64_t H) { return H > 0 && H % 16 == 0 && H <= 128; }

/// Its dynamic shared memory: k and v tiles of 64 rows, four warp regions
/// (two 16-row query tiles and an 80-row k_r band chunk, or its f32
/// product), and the rows' and keys' masks data. Rows are H + 8 bf16 wide.
constexpr int64_t attnTcSmemBytes(int64_t H) {
  const int64_t ld = H + 8;
  const int64_t band = 80 * ld * 2, prod = 16 * 84 * 4;
  return 2 * 64 * ld * 2 + 4 * (2 * 16 * ld * 2 + (band > prod ? band : prod)) +
         64 * 32 + 64 * 16;
}
static_assert(attnTcSmemBytes(64) == 86016, "the figure the docs quote");

} // namespace xlnetc::rt::dev

#endif // XLNETC_RUNTIME_DEVICE_ATTENTIONTC_H
