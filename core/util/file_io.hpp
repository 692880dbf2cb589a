#pragma once
// Whole-file reads with one open/fstat/read sequence (no iostreams): chart loading reads
// thousands of small files per render.

#include <cstddef>
#include <string>

namespace emco {

// Reads the regular file at `path` into `out`. Returns 0, or an errno value: ENOENT and
// friends from open(2), EISDIR/EINVAL for a directory or another non-regular file, EFBIG when
// the file is larger than `max_bytes` (nothing is read then). `out` is unspecified on error.
int read_whole_file(const std::string& path, std::string& out, std::size_t max_bytes = static_cast<std::size_t>(-1));

// The same for `name` relative to the open directory `dir_fd` (openat(2)): walking a tree
// this way resolves one path component per file instead of the whole path.
int read_whole_file_at(int dir_fd, const std::string& name, std::string& out,
                       std::size_t max_bytes = static_cast<std::size_t>(-1));

}  // namespace emco
