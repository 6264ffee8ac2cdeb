//===- TextInput.cpp - Reading text corpora, plain or compressed ----------===//

#include "runtime/data/TextInput.h"

#include "runtime/io/InputFile.h"

#include <fmt/format.h>

#include <zlib.h>
#include <zstd.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>
#include <utility>

namespace xlnetc::rt::data {

namespace {

/// The input buffer: what one read(2) of a compressed file asks for.
constexpr size_t kInputBytes = size_t(256) << 10;

/// The most one inflate call is given (its counters are 32-bit).
constexpr size_t kMaxZlibChunk = size_t(1) << 30;

} // namespace

const char *compressionName(Compression compression) {
  switch (compression) {
  case Compression::None:
    return "plain";
  case Compression::Gzip:
    return "gzip";
  case Compression::Zstd:
    return "zstd";
  }
  return "unknown";
}

//===----------------------------------------------------------------------===//
// TextInput
//===----------------------------------------------------------------------===//

/// The decompressor of a compressed file; freed with it.
struct TextInput::Decoder {
  z_stream zlib{};
  bool zlibStarted = false;
  ZSTD_DStream *zstd = nullptr;

  ~Decoder() {
    if (zlibStarted)
      ::inflateEnd(&zlib);
    ZSTD_freeDStream(zstd); // accepts nullptr
  }
};

TextInput::TextInput(std::string path, int fd)
    : path_(std::move(path)), fd_(fd), in_(new char[kInputBytes]) {}

TextInput::~TextInput() {
  if (fd_ >= 0)
    ::close(fd_);
}

Status TextInput::open(const std::string &path, std::unique_ptr<TextInput> &out) {
  out.reset();
  int fd = -1;
  XLNETC_RETURN_IF_ERROR(openInputFile(path, fd));
  std::unique_ptr<TextInput> input(new TextInput(path, fd)); // owns fd now
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return Status::error(fmt::format("{}: cannot stat: {}", path, std::strerror(errno)));
  input->fileSize_ = uint64_t(st.st_size);

  // The magic bytes: the first four (fewer in a shorter file).
  while (input->inLen_ < 4) {
    ssize_t n = ::read(fd, input->in_.get() + input->inLen_, kInputBytes - input->inLen_);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return Status::error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
    if (n == 0) {
      input->fileEnd_ = true;
      break;
    }
    input->inLen_ += size_t(n);
    input->fileRead_ += uint64_t(n);
  }
  const auto *magic = reinterpret_cast<const unsigned char *>(input->in_.get());
  const size_t have = input->inLen_;
  if (have >= 2 && magic[0] == 0x1f && magic[1] == 0x8b)
    input->compression_ = Compression::Gzip;
  else if (have >= 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd)
    input->compression_ = Compression::Zstd;

  if (input->compression_ == Compression::Gzip) {
    input->decoder_ = std::make_unique<Decoder>();
    z_stream &z = input->decoder_->zlib;
    // 15 + 32: a 32 KiB window, gzip or zlib header detected.
    const int rc = ::inflateInit2(&z, 15 + 32);
    if (rc != Z_OK)
      return Status::error(fmt::format("{}: cannot start the gzip decoder: {}", path,
                                       z.msg ? z.msg : ::zError(rc)));
    input->decoder_->zlibStarted = true;
  } else if (input->compression_ == Compression::Zstd) {
    input->decoder_ = std::make_unique<Decoder>();
    input->decoder_->zstd = ZSTD_createDStream();
    if (!input->decoder_->zstd)
      return Status::error(fmt::format("{}: cannot start the zstd decoder: out of memory", path));
    const size_t rc = ZSTD_initDStream(input->decoder_->zstd);
    if (ZSTD_isError(rc))
      return Status::error(fmt::format("{}: cannot start the zstd decoder: {}", path,
                                       ZSTD_getErrorName(rc)));
  }
  out = std::move(input);
  return Status::ok();
}

Status TextInput::fail(uint64_t at, const std::string &what) {
  error_ = Status::error(fmt::format("{}: at decompressed byte {}: {}", path_, at, what));
  return error_;
}

Status TextInput::fill() {
  inPos_ = inLen_ = 0;
  while (!fileEnd_) {
    ssize_t n = ::read(fd_, in_.get(), kInputBytes);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail(offset_, fmt::format("cannot read: {}", std::strerror(errno)));
    if (n == 0) {
      fileEnd_ = true;
      break;
    }
    inLen_ = size_t(n);
    fileRead_ += uint64_t(n);
    break;
  }
  return Status::ok();
}

Status TextInput::read(char *buf, size_t n, size_t &got) {
  got = 0;
  if (!error_)
    return error_;
  if (n == 0)
    return Status::ok();
  switch (compression_) {
  case Compression::None:
    return readPlain(buf, n, got);
  case Compression::Gzip:
    return readGzip(buf, n, got);
  case Compression::Zstd:
    return readZstd(buf, n, got);
  }
  return Status::ok();
}

Status TextInput::readPlain(char *buf, size_t n, size_t &got) {
  if (inPos_ < inLen_) { // what the magic probe (or a fill) read
    got = std::min(n, inLen_ - inPos_);
    std::memcpy(buf, in_.get() + inPos_, got);
    inPos_ += got;
    offset_ += got;
    return Status::ok();
  }
  while (!fileEnd_) {
    ssize_t r = ::read(fd_, buf, std::min(n, size_t(std::numeric_limits<ssize_t>::max())));
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return fail(offset_, fmt::format("cannot read: {}", std::strerror(errno)));
    if (r == 0) {
      fileEnd_ = true;
      break;
    }
    got = size_t(r);
    fileRead_ += got;
    offset_ += got;
    break;
  }
  return Status::ok();
}

Status TextInput::readGzip(char *buf, size_t n, size_t &got) {
  z_stream &z = decoder_->zlib;
  n = std::min(n, kMaxZlibChunk);
  for (;;) {
    if (inPos_ == inLen_)
      XLNETC_RETURN_IF_ERROR(fill());
    if (inPos_ == inLen_) { // the end of the file
      if (unitDone_)
        return Status::ok();
      return fail(offset_, "ends inside a gzip member: truncated");
    }
    if (unitDone_) { // more bytes after a member: the next member
      if (::inflateReset(&z) != Z_OK)
        return fail(offset_, "cannot restart the gzip decoder");
      unitDone_ = false;
    }
    z.next_in = reinterpret_cast<Bytef *>(in_.get() + inPos_);
    z.avail_in = uInt(inLen_ - inPos_);
    z.next_out = reinterpret_cast<Bytef *>(buf);
    z.avail_out = uInt(n);
    const int rc = ::inflate(&z, Z_NO_FLUSH);
    const size_t used = (inLen_ - inPos_) - z.avail_in;
    const size_t produced = n - z.avail_out;
    inPos_ += used;
    got = produced;
    offset_ += produced;
    if (rc == Z_STREAM_END) {
      unitDone_ = true;
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      std::string what = rc == Z_NEED_DICT ? "needs a preset dictionary"
                                           : (z.msg ? z.msg : ::zError(rc));
      // The bytes decoded before the error are handed out first.
      Status s = fail(offset_, "corrupt gzip data: " + what);
      return produced ? Status::ok() : s;
    } else if (used == 0 && produced == 0) {
      // Input and output space, yet no progress: never loop on it.
      return fail(offset_, "corrupt gzip data: the decoder makes no progress");
    }
    if (produced)
      return Status::ok();
  }
}

Status TextInput::readZstd(char *buf, size_t n, size_t &got) {
  for (;;) {
    if (inPos_ == inLen_)
      XLNETC_RETURN_IF_ERROR(fill());
    const bool atEnd = inPos_ == inLen_;
    if (atEnd && unitDone_)
      return Status::ok();
    ZSTD_inBuffer in{in_.get() + inPos_, inLen_ - inPos_, 0};
    ZSTD_outBuffer out{buf, n, 0};
    const size_t rc = ZSTD_decompressStream(decoder_->zstd, &out, &in);
    if (ZSTD_isError(rc))
      return fail(offset_, fmt::format("corrupt zstd data: {}", ZSTD_getErrorName(rc)));
    inPos_ += in.pos;
    unitDone_ = rc == 0; // a frame decoded and flushed whole
    got = out.pos;
    offset_ += out.pos;
    if (got)
      return Status::ok();
    if (atEnd) { // no input left, nothing more came out
      if (unitDone_)
        return Status::ok();
      return fail(offset_, "ends inside a zstd frame: truncated");
    }
  }
}

Status TextInput::seek(uint64_t offset) {
  if (!error_)
    return error_;
  if (compression_ != Compression::None)
    return Status::error(fmt::format("{}: cannot seek to byte {}: a {} file is read in order "
                                     "(only plain files seek)",
                                     path_, offset, compressionName(compression_)));
  struct stat st;
  if (::fstat(fd_, &st) != 0)
    return Status::error(fmt::format("{}: cannot stat: {}", path_, std::strerror(errno)));
  if (offset > uint64_t(st.st_size))
    return Status::error(fmt::format("{}: cannot seek to byte {}: the file has {} bytes",
                                     path_, offset, uint64_t(st.st_size)));
  if (::lseek(fd_, off_t(offset), SEEK_SET) < 0)
    return Status::error(fmt::format("{}: cannot seek to byte {}: {}", path_, offset,
                                     std::strerror(errno)));
  inPos_ = inLen_ = 0;
  fileEnd_ = false;
  fileRead_ = offset;
  offset_ = offset;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// TextInputBuf
//===----------------------------------------------------------------------===//

TextInputBuf::TextInputBuf(TextInput &input, uint64_t limit, size_t bufferBytes)
    : input_(input), remaining_(limit), buffer_(std::max<size_t>(bufferBytes, 1)) {
  setg(buffer_.data(), buffer_.data(), buffer_.data());
}

TextInputBuf::int_type TextInputBuf::underflow() {
  if (gptr() < egptr())
    return traits_type::to_int_type(*gptr());
  if (remaining_ == 0 || !status_)
    return traits_type::eof();
  const size_t want = size_t(std::min<uint64_t>(remaining_, buffer_.size()));
  size_t got = 0;
  Status s = input_.read(buffer_.data(), want, got);
  if (!s) {
    status_ = s;
    return traits_type::eof();
  }
  if (got == 0)
    return traits_type::eof();
  remaining_ -= got;
  setg(buffer_.data(), buffer_.data(), buffer_.data() + got);
  return traits_type::to_int_type(*gptr());
}

//===----------------------------------------------------------------------===//
// expandInputs
//===----------------------------------------------------------------------===//

namespace {

/// A file found, with its identity for spotting the same file twice.
struct FoundFile {
  std::string path;
  dev_t dev;
  ino_t ino;
};

std::string joinPath(const std::string &dir, const char *name) {
  if (!dir.empty() && dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

/// Adds the regular files under the directory open as `fd` (taken: closed
/// here), spelled `dirPath`, to `files`; nothing inside is followed.
Status walkDirectory(int fd, const std::string &dirPath, std::vector<FoundFile> &files) {
  std::unique_ptr<DIR, int (*)(DIR *)> dir(::fdopendir(fd), ::closedir);
  if (!dir) {
    Status s = Status::error(
        fmt::format("{}: cannot read the directory: {}", dirPath, std::strerror(errno)));
    ::close(fd);
    return s;
  }
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    const dirent *entry = ::readdir(dir.get());
    if (!entry) {
      if (errno != 0)
        return Status::error(
            fmt::format("{}: cannot read the directory: {}", dirPath, std::strerror(errno)));
      break;
    }
    if (entry->d_name[0] == '.') // hidden, and "." and ".."
      continue;
    names.emplace_back(entry->d_name);
  }
  const int dfd = ::dirfd(dir.get());
  for (const std::string &name : names) {
    const std::string path = joinPath(dirPath, name.c_str());
    struct stat st;
    if (::fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) // gone since it was listed
        continue;
      return Status::error(fmt::format("{}: cannot stat: {}", path, std::strerror(errno)));
    }
    if (S_ISREG(st.st_mode)) {
      files.push_back({path, st.st_dev, st.st_ino});
    } else if (S_ISDIR(st.st_mode)) {
      const int sub = ::openat(dfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) {
        if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR) // replaced since
          continue;
        return Status::error(
            fmt::format("{}: cannot open the directory: {}", path, std::strerror(errno)));
      }
      XLNETC_RETURN_IF_ERROR(walkDirectory(sub, path, files));
    }
    // A symbolic link, a FIFO, a device, a socket: not followed, not read.
  }
  return Status::ok();
}

} // namespace

Status expandInputs(const std::vector<std::string> &inputs, std::vector<std::string> &files) {
  std::vector<std::string> result;
  std::map<std::pair<dev_t, ino_t>, std::string> seen;
  auto add = [&](const FoundFile &file) -> Status {
    auto [it, fresh] = seen.emplace(std::make_pair(file.dev, file.ino), file.path);
    if (!fresh)
      return Status::error(fmt::format("{}: the same file as {} (an input named twice)",
                                       file.path, it->second));
    result.push_back(file.path);
    return Status::ok();
  };
  for (const std::string &input : inputs) {
    if (input.empty())
      return Status::error("an empty input name");
    struct stat st;
    if (::stat(input.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      // A file (after links), or an error naming what it is instead.
      XLNETC_RETURN_IF_ERROR(checkInputFile(input));
      if (::stat(input.c_str(), &st) != 0)
        return Status::error(fmt::format("{}: cannot stat: {}", input, std::strerror(errno)));
      XLNETC_RETURN_IF_ERROR(add({input, st.st_dev, st.st_ino}));
      continue;
    }
    // A directory the user named (after links), walked without following
    // anything inside it.
    const int fd = ::open(input.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
      return Status::error(
          fmt::format("{}: cannot open the directory: {}", input, std::strerror(errno)));
    std::vector<FoundFile> found;
    XLNETC_RETURN_IF_ERROR(walkDirectory(fd, input, found));
    if (found.empty())
      return Status::error(fmt::format("{}: no files in it", input));
    std::sort(found.begin(), found.end(),
              [](const FoundFile &a, const FoundFile &b) { return a.path < b.path; });
    for (const FoundFile &file : found)
      XLNETC_RETURN_IF_ERROR(add(file));
  }
  files = std::move(result);
  return Status::ok();
}

} // namespace xlnetc::rt::data
