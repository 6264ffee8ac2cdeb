//===- TextInput.h - Reading text corpora, plain or compressed --*- C++ -*-===//
//
// A corpus file may be plain text, gzip (one or more members, as `cat a.gz
// b.gz` makes) or zstd (one or more frames); the compression is told by the
// file's magic bytes, never by its name. TextInput hands out the file's
// decompressed bytes in order with bounded memory (fixed buffers, never the
// whole file); TextInputBuf puts a std::streambuf over it for line readers
// (std::getline). expandInputs turns the files and directories a user names
// into the list of files to read, in a deterministic order.
//
// Inputs are data (docs/Security.md): files are opened with openInputFile
// (a FIFO, a device or a directory in a file's place is an error, never a
// hang), and nothing inside a directory the user names is followed out of it.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DATA_TEXTINPUT_H
#define XLNETC_RUNTIME_DATA_TEXTINPUT_H

#include "runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <streambuf>
#include <string>
#include <vector>

namespace xlnetc::rt::data {

/// How a file's bytes are stored, as its magic bytes tell.
enum class Compression {
  /// Anything else: the bytes as they are.
  None,
  /// Starts with 1f 8b: one or more gzip members.
  Gzip,
  /// Starts with 28 b5 2f fd: one or more zstd frames.
  Zstd,
};

/// "plain", "gzip" or "zstd", for messages.
const char *compressionName(Compression compression);

/// A sequential reader of one input file's decompressed bytes. Memory is
/// bounded: a fixed 256 KiB input buffer and the decoder's state (zlib's
/// 32 KiB window; a zstd frame's window, which zstd's default limit keeps
/// to 128 MiB: a frame needing more is an error). The first error is kept:
/// every read after it returns it.
class TextInput {
public:
  /// Opens `path` (rt::openInputFile: a regular file, after links) and tells
  /// its compression from its first bytes. Errors name the file.
  static Status open(const std::string &path, std::unique_ptr<TextInput> &out);

  ~TextInput();
  TextInput(const TextInput &) = delete;
  TextInput &operator=(const TextInput &) = delete;

  /// Reads up to `n` decompressed bytes into `buf`; `got` is how many, 0
  /// only at the end of the data (or when `n` is 0). Errors name the file
  /// and the decompressed byte offset: a compressed file that ends inside a
  /// gzip member or zstd frame (truncated), corrupt data (the decoder's
  /// message), trailing bytes that start no member or frame, a read error.
  Status read(char *buf, size_t n, size_t &got);

  /// Whether seek works: plain files only.
  bool seekable() const { return compression_ == Compression::None; }
  /// Continues reading at byte `offset` of a plain file (at most its size);
  /// an error naming the file for a compressed one.
  Status seek(uint64_t offset);

  /// The file's size on disk, in bytes (at open).
  uint64_t fileSize() const { return fileSize_; }
  /// Bytes of the file on disk taken by the decoder so far (a plain file:
  /// the position of the next byte); fileSize() at the end. For progress.
  uint64_t consumed() const { return fileRead_ - (inLen_ - inPos_); }
  /// Decompressed bytes handed out so far, plus the last seek's offset.
  uint64_t offset() const { return offset_; }

  /// The compression its magic bytes told.
  Compression compression() const { return compression_; }
  /// The path it was opened with (for messages).
  const std::string &path() const { return path_; }

private:
  struct Decoder;

  TextInput(std::string path, int fd);

  /// Refills the empty input buffer from the file (nothing at its end).
  Status fill();
  /// `what` as an error naming the file and the decompressed offset
  /// `at`; kept so later reads return it too.
  Status fail(uint64_t at, const std::string &what);
  Status readPlain(char *buf, size_t n, size_t &got);
  Status readGzip(char *buf, size_t n, size_t &got);
  Status readZstd(char *buf, size_t n, size_t &got);

  std::string path_;
  int fd_ = -1;
  Compression compression_ = Compression::None;
  uint64_t fileSize_ = 0;
  /// Decompressed bytes handed out, plus the seek offset.
  uint64_t offset_ = 0;
  /// Bytes read from the file (its descriptor's position).
  uint64_t fileRead_ = 0;
  /// The input buffer and its unread part [inPos_, inLen_).
  std::unique_ptr<char[]> in_;
  size_t inPos_ = 0, inLen_ = 0;
  /// read(2) has returned 0.
  bool fileEnd_ = false;
  /// Gzip: the last member ended (Z_STREAM_END); zstd: the last frame
  /// was decoded and flushed whole.
  bool unitDone_ = false;
  /// The first error, returned by every read after it.
  Status error_ = Status::ok();
  /// zlib's or zstd's state (none for a plain file).
  std::unique_ptr<Decoder> decoder_;
};

/// A std::streambuf over a TextInput, handing out at most `limit` bytes
/// (UINT64_MAX: no limit) and then the end, so `std::istream in(&buf)`
/// works with std::getline-style readers. A read error is kept in status()
/// and the stream then just sees the end of the data: callers must check
/// status() once the stream ends, or an error passes for a short file.
class TextInputBuf : public std::streambuf {
public:
  /// Reads `input` (which must outlive it) from where it is, through a
  /// buffer of `bufferBytes` (at least 1).
  explicit TextInputBuf(TextInput &input, uint64_t limit = UINT64_MAX,
                        size_t bufferBytes = size_t(1) << 16);
  TextInputBuf(const TextInputBuf &) = delete;
  TextInputBuf &operator=(const TextInputBuf &) = delete;

  /// Ok, or the first read error (after which the stream saw the end).
  Status status() const { return status_; }
  /// Bytes of the limit not yet taken from the TextInput.
  uint64_t remaining() const { return remaining_; }

protected:
  /// Refills the buffer from the TextInput (at most the limit's rest).
  int_type underflow() override;

private:
  TextInput &input_;
  uint64_t remaining_;
  std::vector<char> buffer_;
  Status status_ = Status::ok();
};

/// The files to read for the `inputs` a user named, in order: a regular
/// file (after links: the user named it) as given; a directory walked
/// recursively, its regular files sorted by path (byte order), names
/// starting with '.' skipped, and no symbolic link inside it followed (nor
/// anything else that is no regular file or directory: skipped without an
/// error). Errors, each naming the input: a missing input, one that is no
/// regular file or directory (a FIFO, a device, a socket), a directory
/// with no files in it, and the same file reached twice (naming both
/// spellings). `files` is set only on success.
Status expandInputs(const std::vector<std::string> &inputs, std::vector<std::string> &files);

} // namespace xlnetc::rt::data

#endif // XLNETC_RUNTIME_DATA_TEXTINPUT_H
