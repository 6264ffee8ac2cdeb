//===- TensorBoard.h - Scalars for TensorBoard ------------------*- C++ -*-===//
//
// `xlnetc train --tensorboard DIR` writes the run's scalars (loss, held-out
// loss, learning rate, gradient norm, tokens/s, memory) as a TensorBoard
// event file in DIR (docs/Training.md "TensorBoard"). The records are made
// by the plugin libxlnetc-tensorboard.so (tensorboard/Plugin.h: protobuf
// messages, ISA-L's CRC32C), loaded with dlopen only when asked for, so
// the runtime itself needs neither library. DIR is output: created when
// missing, never written through a symbolic link; each run (and each
// resume) adds a file of its own and changes no other.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_TRAIN_TENSORBOARD_H
#define XLNETC_RUNTIME_TRAIN_TENSORBOARD_H

#include "runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace xlnetc::rt::train {

class TensorBoardWriter {
public:
  /// Loads the plugin ($XLNETC_TENSORBOARD_PLUGIN, else beside the
  /// executable, else ../lib from it, else the loader's path) and starts a
  /// new event file in `dir`.
  static Status open(const std::string &dir, std::unique_ptr<TensorBoardWriter> &out);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter &) = delete;
  TensorBoardWriter &operator=(const TensorBoardWriter &) = delete;

  /// One event: `scalars` (tag, value) at `step`.
  Status write(int64_t step, const std::vector<std::pair<std::string, double>> &scalars);
  /// The event file's path.
  const std::string &path() const { return path_; }

private:
  TensorBoardWriter() = default;
  struct Api;
  std::unique_ptr<Api> api_;
  int fd_ = -1;
  std::string path_;
};

} // namespace xlnetc::rt::train

#endif // XLNETC_RUNTIME_TRAIN_TENSORBOARD_H
