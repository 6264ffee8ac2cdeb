//===- Plugin.h - The C interface of libxlnetc-tensorboard.so ---*- C++ -*-===//
//
// The plugin that writes TensorBoard event files (runtime/train/TensorBoard.h
// loads it with dlopen, so xlnetc and xlnetc-run run where protobuf and
// ISA-L are not installed). The events are protobuf messages (event.proto,
// TensorFlow's field numbers) in TFRecord framing: the length (uint64 LE),
// its masked CRC32C, the message, its masked CRC32C; CRC32C is ISA-L's
// crc32_iscsi. The caller opens the file; the plugin only writes to it.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_TRAIN_TENSORBOARD_PLUGIN_H
#define XLNETC_RUNTIME_TRAIN_TENSORBOARD_PLUGIN_H

#ifdef __cplusplus
extern "C" {
#endif

/// The interface version the runtime expects (checked when loaded).
#define XLNETC_TB_PLUGIN_VERSION 1

int xlnetc_tb_version(void);
/// The masked CRC32C of `bytes` (TFRecord's), for the runtime's tests.
unsigned xlnetc_tb_masked_crc32c(const void *data, unsigned long long bytes);
/// Writes the file_version event to `fd` (open for writing, owned by the
/// caller). 0, or errno.
int xlnetc_tb_begin(int fd, double wallTime);
/// Writes one event of `count` scalars (tags[i], values[i]) at `step`.
/// 0, or errno.
int xlnetc_tb_scalars(int fd, long long step, double wallTime, const char *const *tags,
                      const float *values, int count);

#ifdef __cplusplus
}
#endif

#endif // XLNETC_RUNTIME_TRAIN_TENSORBOARD_PLUGIN_H
