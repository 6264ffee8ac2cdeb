//===- Synthetic.h - generated batches --------------------------*- C++ -*-===//
//
// A batch for running a step without files, built through the project's
// _local_perm from random tokens, masked positions and a random
// permutation. (Parameters drawn like the official init:
// rt::train::initialParameters, runtime/train/Trainer.h.)
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_SYNTHETIC_H
#define XLNETC_XLNETC_DRIVER_SYNTHETIC_H

#include "xlnetc/Spec/StepShape.h"

#include "runtime/Status.h"
#include "runtime/Tensor.h"

namespace xlnetc {

/// A batch in the golden format (input_k, seg_id, perm_mask, target_mapping,
/// target, target_mask, zero mems.{i} when shape.mlen > 0). Records follow
/// the official layout [reuse | A SEP B SEP CLS]; prediction positions are
/// random single tokens (ceil(np/2) in the reuse part, the rest after it),
/// not the official span masking.
rt::Status syntheticBatch(const ModelSpec &spec, const StepShape &shape,
                          uint64_t seed, rt::TensorMap &batch);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_SYNTHETIC_H
