#pragma once
// Text from outside (what a Kubernetes API server or a git server answers)
// made safe to put in a message emco prints.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace emco {

// `text` with every invalid UTF-8 byte and every control character (C0 but
// tab and LF, DEL, C1) replaced by U+FFFD and every CR removed, so that it
// cannot drive a terminal (escape sequences) or overwrite a line; cut on a
// character boundary to at most `max_bytes` bytes plus "..." when longer.
std::string printable(std::string_view text, std::size_t max_bytes);

// `text` with every occurrence of every (non-empty) secret replaced by "***":
// a credential a server echoes back, or one a library's message quotes, is
// never printed.
std::string scrub(std::string text, const std::vector<std::string>& secrets);

}  // namespace emco
