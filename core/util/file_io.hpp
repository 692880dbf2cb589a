#pragma once
// Whole-file reads with one open/fstat/read sequence (no iostreams): chart loading reads
// thousands of small files per render.

#include <cstddef>
#include <string>

#include "core/util/error.hpp"

namespace emco {

// Reads the regular file at `path` into `out`. Returns 0, or an errno value: ENOENT and
// friends from open(2), EISDIR/EINVAL for a directory or another non-regular file, EFBIG when
// the file is larger than `max_bytes` (nothing is read then). `out` is unspecified on error.
int read_whole_file(const std::string& path, std::string& out, std::size_t max_bytes = static_cast<std::size_t>(-1));

// The same for `name` relative to the open directory `dir_fd` (openat(2)): walking a tree
// this way resolves one path component per file instead of the whole path.
int read_whole_file_at(int dir_fd, const std::string& name, std::string& out,
                       std::size_t max_bytes = static_cast<std::size_t>(-1));

// What read_whole_file_at would return for `name` without reading it: opens it, checks it is a
// regular file of at most `max_bytes` and closes it. On 0, `size` is its size then.
int check_whole_file_at(int dir_fd, const std::string& name, std::size_t& size,
                        std::size_t max_bytes = static_cast<std::size_t>(-1));

// How to read a file a user named (a batch file, an attachment, a values
// file, a kubeconfig): the words for messages and the limits.
struct InputFile {
  std::string what = "file";                          // "batch file", "values file", "kubeconfig" ...
  std::string shown;                                  // the path as the user wrote it ("": the path read)
  std::size_t max_bytes = std::size_t{256} << 20;     // larger: Error(invalid) naming the limit
  std::string too_big_hint;
  bool allow_empty = true;                            // false: an empty file is Error(invalid) with `empty_hint`
  std::string empty_hint;
  ErrorKind missing = ErrorKind::invalid;             // the kind when the path does not exist
  std::string missing_hint;
};

// Reads the file at `path` as `how` says. Never blocks and never reads
// without end: a FIFO, socket, device, directory or symlink loop is refused
// with Error(invalid) naming what it is ("'x' is a FIFO, not a regular
// file"), as are unreadable and oversized files. Messages name `what` and
// the path, never the content; callers add the FILE:LINE that named it.
std::string read_input_file(const std::string& path, const InputFile& how);

}  // namespace emco
