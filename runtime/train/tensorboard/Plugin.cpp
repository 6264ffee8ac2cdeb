//===- Plugin.cpp - libxlnetc-tensorboard.so: event records ---------------===//

#include "runtime/train/tensorboard/Plugin.h"

#include "event.pb.h"

#include <isa-l/crc.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include <unistd.h>

namespace {

/// CRC32C (Castagnoli) of `bytes`, the standard one (initial and final
/// inversion): ISA-L's crc32_iscsi takes and returns the raw register.
uint32_t crc32c(const void *data, size_t bytes) {
  uint32_t crc = 0xffffffffu;
  const auto *p = static_cast<const unsigned char *>(data);
  while (bytes > 0) { // crc32_iscsi takes an int length
    const int n = bytes > (1u << 30) ? (1 << 30) : int(bytes);
    crc = crc32_iscsi(const_cast<unsigned char *>(p), n, crc);
    p += n;
    bytes -= size_t(n);
  }
  return ~crc;
}

/// TFRecord's masking of a CRC stored with the data it covers.
uint32_t masked(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

void putLe(std::string &out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(char((v >> (8 * i)) & 0xff));
}

/// Writes `event` as one TFRecord to `fd`, whole (retrying short writes).
int writeRecord(int fd, const tensorflow::Event &event) {
  std::string data;
  if (!event.SerializeToString(&data))
    return EINVAL;
  std::string record;
  putLe(record, data.size(), 8);
  putLe(record, masked(crc32c(record.data(), 8)), 4);
  record += data;
  putLe(record, masked(crc32c(data.data(), data.size())), 4);
  for (size_t done = 0; done < record.size();) {
    const ssize_t n = ::write(fd, record.data() + done, record.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? errno : EIO;
    done += size_t(n);
  }
  return 0;
}

} // namespace

extern "C" {

int xlnetc_tb_version(void) { return XLNETC_TB_PLUGIN_VERSION; }

unsigned xlnetc_tb_masked_crc32c(const void *data, unsigned long long bytes) {
  return masked(crc32c(data, size_t(bytes)));
}

int xlnetc_tb_begin(int fd, double wallTime) {
  tensorflow::Event event;
  event.set_wall_time(wallTime);
  event.set_file_version("brain.Event:2");
  return writeRecord(fd, event);
}

int xlnetc_tb_scalars(int fd, long long step, double wallTime, const char *const *tags,
                      const float *values, int count) {
  tensorflow::Event event;
  event.set_wall_time(wallTime);
  event.set_step(step);
  tensorflow::Summary *summary = event.mutable_summary();
  for (int i = 0; i < count; ++i) {
    tensorflow::Summary::Value *v = summary->add_value();
    v->set_tag(tags[i]);
    v->set_simple_value(values[i]);
  }
  return writeRecord(fd, event);
}

} // extern "C"
