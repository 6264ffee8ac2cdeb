//===- WeightsSource.h - What a weights argument names ---------*- C++ -*-===//
//
// Every command that takes weights (`train --init-from`, `run-step
// --weights`, `export`) resolves its argument here, so that they all accept
// the same things (docs/Checkpoints.md "Weights sources"):
//
//   - a safetensors file (HuggingFace weights or an xlnetc checkpoint);
//   - a HuggingFace model directory: its model.safetensors, or the shards
//     its model.safetensors.index.json lists;
//   - a model.safetensors.index.json itself.
//
// What xlnetc does not read gets one error saying what the file is and the
// one-line conversion to safetensors: PyTorch's pickle or zip checkpoints
// (pytorch_model.bin, *.pt: loading them can run code), TensorFlow's HDF5
// and Flax's msgpack weights.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_TRAIN_WEIGHTSSOURCE_H
#define XLNETC_RUNTIME_TRAIN_WEIGHTSSOURCE_H

#include "runtime/Status.h"

#include <string>
#include <vector>

namespace xlnetc::rt::train {

struct WeightsSource {
  std::string given;              ///< the argument as given
  std::vector<std::string> files; ///< safetensors files: one, or the shards in order
  /// The config.json beside the weights (in the directory, or beside the
  /// file or index); empty when there is none.
  std::string config;
};

/// Resolves `path` (see the file comment). `what` names the argument in
/// errors ("init-from", "weights"). Fails with one line naming the path.
Status resolveWeightsSource(const std::string &path, const std::string &what,
                            WeightsSource &out);

} // namespace xlnetc::rt::train

#endif // XLNETC_RUNTIME_TRAIN_WEIGHTSSOURCE_H
