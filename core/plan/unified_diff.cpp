#include "core/plan/unified_diff.hpp"

#include <algorithm>
#include <vector>

namespace emco::plan {

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      out.push_back(text.substr(pos));  // no final newline
      break;
    }
    out.push_back(text.substr(pos, nl - pos + 1));
    pos = nl + 1;
  }
  return out;
}

enum class Op { keep, del, add };

// Edit script by Myers' O(ND) algorithm (linear space is not needed for manifests).
std::vector<std::pair<Op, size_t>> edit_script(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const long n = static_cast<long>(a.size()), m = static_cast<long>(b.size()), max = n + m;
  std::vector<long> v(static_cast<size_t>(2 * max + 2), 0);
  std::vector<std::vector<long>> trace;
  long d_end = 0;
  for (long d = 0; d <= max; ++d) {
    trace.push_back(v);
    bool done = false;
    for (long k = -d; k <= d; k += 2) {
      long x;
      size_t ki = static_cast<size_t>(k + max);
      if (k == -d || (k != d && v[ki - 1] < v[ki + 1]))
        x = v[ki + 1];
      else
        x = v[ki - 1] + 1;
      long y = x - k;
      while (x < n && y < m && a[static_cast<size_t>(x)] == b[static_cast<size_t>(y)]) ++x, ++y;
      v[ki] = x;
      if (x >= n && y >= m) {
        done = true;
        break;
      }
    }
    if (done) {
      d_end = d;
      trace.push_back(v);
      break;
    }
  }
  // Backtrack.
  std::vector<std::pair<Op, size_t>> script;
  long x = n, y = m;
  for (long d = d_end; d > 0; --d) {
    const auto& pv = trace[static_cast<size_t>(d)];
    long k = x - y;
    long prev_k = (k == -d || (k != d && pv[static_cast<size_t>(k - 1 + max)] < pv[static_cast<size_t>(k + 1 + max)]))
                      ? k + 1
                      : k - 1;
    long prev_x = pv[static_cast<size_t>(prev_k + max)];
    long prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) script.push_back({Op::keep, static_cast<size_t>(--x)}), --y;
    if (x == prev_x)
      script.push_back({Op::add, static_cast<size_t>(--y)});
    else
      script.push_back({Op::del, static_cast<size_t>(--x)});
  }
  while (x > 0 && y > 0) script.push_back({Op::keep, static_cast<size_t>(--x)}), --y;
  std::reverse(script.begin(), script.end());
  return script;
}

std::string show(char mark, const std::string& line) {
  std::string s(1, mark);
  s += line;
  if (line.empty() || line.back() != '\n') s += "\n\\ No newline at end of file\n";
  return s;
}

}  // namespace

std::string unified_diff(const std::string& old_text, const std::string& new_text, int context) {
  if (old_text == new_text) return {};
  auto a = lines_of(old_text), b = lines_of(new_text);
  auto script = edit_script(a, b);
  // Positions (old line, new line) before each script entry.
  std::vector<std::pair<size_t, size_t>> pos;
  size_t ai = 0, bi = 0;
  for (const auto& [op, idx] : script) {
    pos.push_back({ai, bi});
    if (op != Op::add) ++ai;
    if (op != Op::del) ++bi;
  }
  std::string out;
  size_t i = 0;
  const size_t ctx = static_cast<size_t>(context);
  while (i < script.size()) {
    if (script[i].first == Op::keep) {
      ++i;
      continue;
    }
    size_t start = i >= ctx ? i - ctx : 0;
    while (start < i && script[start].first != Op::keep) ++start;
    // Extend the hunk while changes are within 2*context keeps of each other.
    size_t end = i;
    size_t keeps = 0;
    for (size_t j = i; j < script.size(); ++j) {
      if (script[j].first == Op::keep) {
        if (++keeps > 2 * ctx) break;
      } else {
        keeps = 0;
        end = j;
      }
    }
    size_t stop = std::min(script.size(), end + 1 + ctx);
    size_t old_start = pos[start].first, new_start = pos[start].second;
    size_t old_count = 0, new_count = 0;
    std::string body;
    for (size_t j = start; j < stop; ++j) {
      auto [op, idx] = script[j];
      if (op == Op::keep) {
        body += show(' ', a[idx]);
        ++old_count, ++new_count;
      } else if (op == Op::del) {
        body += show('-', a[idx]);
        ++old_count;
      } else {
        body += show('+', b[idx]);
        ++new_count;
      }
    }
    auto range = [](size_t s, size_t c) {
      return std::to_string(c == 0 ? s : s + 1) + (c == 1 ? "" : "," + std::to_string(c));
    };
    out += "@@ -" + range(old_start, old_count) + " +" + range(new_start, new_count) + " @@\n" + body;
    i = stop;
  }
  return out;
}

}  // namespace emco::plan
