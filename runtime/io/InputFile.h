//===- InputFile.h - Reading the files a user points at ---------*- C++ -*-===//
//
// Inputs are data (docs/Security.md): a file the user names is read only if
// it is a regular file, checked on the open descriptor before anything is
// read, and opened without blocking, so a FIFO, a device or a directory in
// its place is one clear error instead of a hang or "no such file". A file
// named inside a directory (a bundle's manifest, a run directory's files) is
// reached without following any link, so nothing leads out of the directory.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_IO_INPUTFILE_H
#define XLNETC_RUNTIME_IO_INPUTFILE_H

#include "runtime/Status.h"

#include <string>

namespace xlnetc::rt {

/// What `path` is when it exists but is no regular file ("a FIFO", "a
/// directory", ...), else "" (a regular file, or nothing there: the open
/// that follows says so). Never blocks: readers that open a file
/// themselves (streams, libraries) call it first, so a FIFO is an error,
/// not a wait for a writer that never comes.
std::string oddFileKind(const std::string &path);

/// An error naming `path` and what it is ("no such file", "a FIFO, not a
/// regular file", ...) unless it is a regular file (after links). Never
/// blocks: for readers that open the file themselves, before they do.
Status checkInputFile(const std::string &path);

/// Opens `path` for reading: a regular file (following links), opened
/// without blocking on a FIFO and checked on the descriptor; `fd` is
/// blocking again on return, owned by the caller.
Status openInputFile(const std::string &path, int &fd);

/// The whole of the regular file `path` (openInputFile).
Status readInputFile(const std::string &path, std::string &out);

/// Whether `name` is one plain file name: not empty, no '/', not "." or "..".
bool isPlainName(const std::string &name);

/// The whole of `relative` inside the directory `dir`: every component a
/// plain name (isPlainName), none a symbolic link, the last a regular file.
/// Errors name `dir/relative` and what is wrong with it.
Status readFileInside(const std::string &dir, const std::string &relative, std::string &out);

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_IO_INPUTFILE_H
