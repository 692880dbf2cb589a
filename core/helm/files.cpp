#include "core/helm/files.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util/error.hpp"
#include "core/util/file_io.hpp"
#include "core/util/strings.hpp"
#include "core/util/utf8.hpp"

namespace emco::helm {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_utf8_bom = "\xEF\xBB\xBF";

std::string strip_bom(std::string data) {
  if (starts_with(data, k_utf8_bom)) data.erase(0, k_utf8_bom.size());
  return data;
}

// --- Go's filepath.Match, byte for byte in behaviour -------------------------------

[[noreturn]] void bad_pattern() { fail(ErrorKind::invalid, "syntax error in pattern"); }

// The rune at the start of s and its width in n (a bad byte is U+FFFD of width 1, as in Go).
char32_t decode_rune(std::string_view s, size_t& n) {
  char32_t r;
  n = utf8::decode(s, 0, r);
  return r;
}

void scan_chunk(std::string_view& pattern, bool& star, std::string_view& chunk) {
  star = false;
  while (!pattern.empty() && pattern[0] == '*') {
    pattern.remove_prefix(1);
    star = true;
  }
  bool inrange = false;
  size_t i = 0;
  for (; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\') {
      if (i + 1 < pattern.size()) ++i;
    } else if (c == '[') {
      inrange = true;
    } else if (c == ']') {
      inrange = false;
    } else if (c == '*' && !inrange) {
      break;
    }
  }
  chunk = pattern.substr(0, i);
  pattern.remove_prefix(i);
}

char32_t get_esc(std::string_view& chunk) {
  if (chunk.empty() || chunk[0] == '-' || chunk[0] == ']') bad_pattern();
  if (chunk[0] == '\\') {
    chunk.remove_prefix(1);
    if (chunk.empty()) bad_pattern();
  }
  size_t n = 0;
  char32_t r = decode_rune(chunk, n);
  if (r == 0xFFFD && n == 1 && static_cast<unsigned char>(chunk[0]) >= 0x80) bad_pattern();
  chunk.remove_prefix(n);
  if (chunk.empty()) bad_pattern();
  return r;
}

// Returns true and the rest of s when chunk matches a prefix of s.
bool match_chunk(std::string_view chunk, std::string_view s, std::string_view& rest) {
  bool failed = false;
  while (!chunk.empty()) {
    if (!failed && s.empty()) failed = true;
    switch (chunk[0]) {
      case '[': {
        char32_t r = 0;
        if (!failed) {
          size_t n = 0;
          r = decode_rune(s, n);
          s.remove_prefix(n);
        }
        chunk.remove_prefix(1);
        bool negated = false;
        if (!chunk.empty() && chunk[0] == '^') {
          negated = true;
          chunk.remove_prefix(1);
        }
        bool match = false;
        int nrange = 0;
        for (;;) {
          if (!chunk.empty() && chunk[0] == ']' && nrange > 0) {
            chunk.remove_prefix(1);
            break;
          }
          char32_t lo = get_esc(chunk);
          char32_t hi = lo;
          if (chunk[0] == '-') {
            chunk.remove_prefix(1);
            hi = get_esc(chunk);
          }
          if (lo <= r && r <= hi) match = true;
          ++nrange;
        }
        if (match == negated) failed = true;
        break;
      }
      case '?':
        if (!failed) {
          if (s[0] == '/') failed = true;
          size_t n = 0;
          decode_rune(s, n);
          s.remove_prefix(n);
        }
        chunk.remove_prefix(1);
        break;
      case '\\':
        chunk.remove_prefix(1);
        if (chunk.empty()) bad_pattern();
        [[fallthrough]];
      default:
        if (!failed) {
          if (chunk[0] != s[0]) failed = true;
          s.remove_prefix(1);
        }
        chunk.remove_prefix(1);
        break;
    }
  }
  if (failed) return false;
  rest = s;
  return true;
}

}  // namespace

bool go_path_match(std::string_view pattern, std::string_view name) {
  while (!pattern.empty()) {
    bool star = false;
    std::string_view chunk;
    scan_chunk(pattern, star, chunk);
    if (star && chunk.empty()) return name.find('/') == std::string_view::npos;
    std::string_view t;
    if (match_chunk(chunk, name, t) && (t.empty() || !pattern.empty())) {
      name = t;
      continue;
    }
    bool advanced = false;
    if (star) {
      for (size_t i = 0; i < name.size() && name[i] != '/'; ++i) {
        if (match_chunk(chunk, name.substr(i + 1), t)) {
          if (pattern.empty() && !t.empty()) continue;
          name = t;
          advanced = true;
          break;
        }
      }
    }
    if (advanced) continue;
    // The rest of the pattern must still be well formed (Go reports ErrBadPattern).
    while (!pattern.empty()) {
      scan_chunk(pattern, star, chunk);
      std::string_view ignored;
      match_chunk(chunk, "", ignored);
    }
    return false;
  }
  return name.empty();
}

// --- .helmignore ----------------------------------------------------------------------

IgnoreRules IgnoreRules::parse(std::string_view text) {
  IgnoreRules rules;
  for (const auto& line : split(text, '\n')) rules.add(line);
  return rules;
}

void IgnoreRules::add_defaults() { add("templates/.?*"); }

void IgnoreRules::add(std::string_view line) {
  std::string rule = trim(line);
  if (rule.empty() || rule[0] == '#') return;
  if (rule.find("**") != std::string::npos)
    fail(ErrorKind::invalid, "double-star (**) syntax is not supported");
  go_path_match(rule, "abc");  // rejects malformed patterns up front, as Helm does
  Pattern p;
  if (rule[0] == '!') {
    p.negate = true;
    rule.erase(0, 1);
  }
  if (!rule.empty() && rule.back() == '/') {
    p.must_dir = true;
    rule.pop_back();
  }
  if (!rule.empty() && rule[0] == '/') {
    p.mode = Pattern::Mode::root;
    rule.erase(0, 1);
  } else if (rule.find('/') != std::string::npos) {
    p.mode = Pattern::Mode::path;
  }
  // Per-file matching showed in profiles of charts with hundreds of files: the usual rules
  // ("OWNERS", "*.swp") need no glob matcher.
  auto has_meta = [](std::string_view s) { return s.find_first_of("*?[\\") != std::string_view::npos; };
  if (!has_meta(rule)) p.kind = Pattern::Kind::literal;
  else if (rule.size() > 1 && rule[0] == '*' && !has_meta(std::string_view(rule).substr(1)) &&
           rule.find('/') == std::string::npos)
    p.kind = Pattern::Kind::star_suffix;
  p.rule = std::move(rule);
  m_patterns.push_back(std::move(p));
}

bool IgnoreRules::ignored(const std::string& path, bool is_dir) const {
  if (path.empty() || path == "." || path == "./") return false;
  // The base name is found once: every file of a chart is asked against every rule.
  const std::string_view whole = path;
  const auto slash = whole.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? whole : whole.substr(slash + 1);
  for (const auto& p : m_patterns) {
    const std::string_view subject = p.mode == Pattern::Mode::base ? base : whole;
    bool matched;
    switch (p.kind) {
      case Pattern::Kind::literal: matched = subject == p.rule; break;
      case Pattern::Kind::star_suffix:  // '*' matches any run without '/' (a base name holds none)
        matched = (p.mode == Pattern::Mode::base || subject.find('/') == std::string_view::npos) &&
                  ends_with(subject, std::string_view(p.rule).substr(1));
        break;
      default: matched = go_path_match(p.rule, subject); break;
    }
    // Helm's negation is odd but deliberate: a '!' rule ignores everything it does NOT
    // match (and every non-directory when it ends in '/').
    if (p.negate) {
      if (p.must_dir && !is_dir) return true;
      if (!matched) return true;
      continue;
    }
    if (p.must_dir && !is_dir) continue;
    if (matched) return true;
  }
  return false;
}

// --- chart directories ------------------------------------------------------------------

namespace {

std::string read_whole_file(const fs::path& path) {
  std::string data;
  if (int err = emco::read_whole_file(path.string(), data))
    fail(ErrorKind::invalid, "cannot read '" + path.string() + "': " + std::strerror(err));
  return data;
}

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};
using DirPtr = std::unique_ptr<DIR, DirCloser>;

// Opens `name` relative to `parent_fd` (AT_FDCWD for a path) as a directory stream.
// A chart file that could not be read (errno `err`): `name` in the size message, `shown` else.
[[noreturn]] void fail_read(int err, const std::string& name, const std::string& shown, std::size_t max_bytes) {
  if (err == EFBIG)
    fail(ErrorKind::invalid,
         "chart file '" + name + "' is larger than the maximum file size " + std::to_string(max_bytes));
  fail(ErrorKind::invalid, "cannot read '" + shown + "': " + std::strerror(err));
}

DirPtr open_dir(int parent_fd, const std::string& name, const std::string& shown) {
  int fd = ::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
  if (!d) {
    int err = errno;
    if (fd >= 0) ::close(fd);
    fail(ErrorKind::invalid, "cannot read '" + shown + "': " + std::strerror(err));
  }
  return DirPtr(d);
}

// Reads the directory `dir` (shown as `dir_path` in errors) with openat(2) relative to it,
// entries in name order, following symlinks as Helm's sympath.Walk does.
// `dir_path` as given (messages), `abs_dir` absolute (deferred files, read later).
void walk_dir(DIR* dir, const std::string& dir_path, const std::string& abs_dir, const std::string& rel,
              const IgnoreRules& rules, const ArchiveLimits& limits,
              const std::function<bool(std::string_view)>& defer, std::vector<ChartFile>& out, size_t& total,
              int depth) {
  if (depth > 64) fail(ErrorKind::invalid, "chart directory '" + dir_path + "' is nested too deeply (symlink loop?)");
  const int dir_fd = ::dirfd(dir);
  auto shown = [&dir_path](const std::string& name) { return (fs::path(dir_path) / name).string(); };
  struct Entry {
    std::string name;
    bool is_dir;
  };
  std::vector<Entry> entries;
  errno = 0;
  while (const dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) {
      struct stat st {};
      if (::fstatat(dir_fd, name.c_str(), &st, 0) == 0) is_dir = S_ISDIR(st.st_mode);
      else if (errno != ENOENT) fail(ErrorKind::invalid, "cannot read '" + shown(name) + "': " + std::strerror(errno));
    }
    entries.push_back({std::move(name), is_dir});
    errno = 0;
  }
  if (errno != 0) fail(ErrorKind::invalid, "cannot read '" + dir_path + "': " + std::strerror(errno));
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  for (const auto& [name, is_dir] : entries) {
    std::string n = rel.empty() ? name : rel + "/" + name;
    if (is_dir) {
      if (rules.ignored(n, true)) continue;
      DirPtr sub = open_dir(dir_fd, name, shown(name));
      walk_dir(sub.get(), shown(name), abs_dir + "/" + name, n, rules, limits, defer, out, total, depth + 1);
      continue;
    }
    if (rules.ignored(n, false)) continue;
    std::string data;
    std::shared_ptr<const DeferredContents> deferred;
    std::size_t size = 0;
    int err = 0;
    if (defer && defer(n)) {
      err = emco::check_whole_file_at(dir_fd, name, size, limits.max_file_bytes);
      if (err == 0) deferred = std::make_shared<const DeferredContents>(abs_dir + "/" + name, limits.max_file_bytes);
    } else {
      err = emco::read_whole_file_at(dir_fd, name, data, limits.max_file_bytes);
      data = strip_bom(std::move(data));
      size = data.size();
    }
    if (err) {
      if (err == EINVAL)
        fail(ErrorKind::invalid,
             "cannot load irregular file '" + shown(name) + "' as it has file mode type bits set");
      fail_read(err, name, shown(name), limits.max_file_bytes);
    }
    total += size;
    if (total > limits.max_total_bytes)
      fail(ErrorKind::invalid, "chart '" + dir_path + "' is larger than the maximum size " +
                                   std::to_string(limits.max_total_bytes));
    out.push_back({std::move(n), std::move(data), std::move(deferred)});
  }
}

}  // namespace

const std::string& DeferredContents::get() const {
  std::call_once(m_once, [this] {
    std::string data;
    if (int err = emco::read_whole_file(m_path, data, m_max_bytes)) fail_read(err, m_path, m_path, m_max_bytes);
    m_data = strip_bom(std::move(data));
  });
  return m_data;
}

std::vector<ChartFile> read_chart_dir(const fs::path& dir, const ArchiveLimits& limits,
                                      const std::function<bool(std::string_view)>& defer) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(ErrorKind::not_found, "chart directory '" + dir.string() + "' does not exist");
  DirPtr top = open_dir(AT_FDCWD, dir.string(), dir.string());
  IgnoreRules rules;
  std::string ignore_text;
  int err = emco::read_whole_file_at(::dirfd(top.get()), ".helmignore", ignore_text);
  if (err == 0) rules = IgnoreRules::parse(ignore_text);
  else if (err != ENOENT) read_whole_file(dir / ".helmignore");  // reports why it cannot be read
  rules.add_defaults();
  std::vector<ChartFile> files;
  size_t total = 0;
  const std::string abs_dir = defer ? fs::absolute(dir).string() : std::string();
  walk_dir(top.get(), dir.string(), abs_dir, "", rules, limits, defer, files, total, 0);
  return files;
}

// --- chart archives ----------------------------------------------------------------------

namespace {

struct ArchiveDeleter {
  void operator()(archive* a) const { archive_read_free(a); }
};

bool is_drive_path(std::string_view n) {
  return n.size() >= 2 && n[1] == ':' && ((n[0] >= 'a' && n[0] <= 'z') || (n[0] >= 'A' && n[0] <= 'Z'));
}

}  // namespace

std::vector<ChartFile> read_chart_archive(std::string_view bytes, const ArchiveLimits& limits) {
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x1f || static_cast<unsigned char>(bytes[1]) != 0x8b)
    fail(ErrorKind::invalid, "chart archive is not gzip-compressed", "a chart package is a .tgz made by 'helm package'");
  std::unique_ptr<archive, ArchiveDeleter> ar(archive_read_new());
  archive_read_support_filter_gzip(ar.get());
  archive_read_support_format_tar(ar.get());
  archive_read_support_format_gnutar(ar.get());
  if (archive_read_open_memory(ar.get(), bytes.data(), bytes.size()) != ARCHIVE_OK) {
    // libarchive leaves the error string null for some inputs (found by chart_archive_fuzz)
    const char* why = archive_error_string(ar.get());
    fail(ErrorKind::invalid, std::string("corrupt or truncated chart archive: ") + (why ? why : "unreadable data"));
  }
  std::vector<ChartFile> files;
  size_t remaining = limits.max_total_bytes;
  size_t entries = 0;
  for (;;) {
    archive_entry* entry = nullptr;
    int rc = archive_read_next_header(ar.get(), &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
      const char* why = archive_error_string(ar.get());
      fail(ErrorKind::invalid, std::string("corrupt or truncated chart archive: ") + (why ? why : "unreadable header"));
    }
    if (++entries > limits.max_entries)
      fail(ErrorKind::invalid, "chart archive has more than " + std::to_string(limits.max_entries) + " entries");
    const char* raw_name = archive_entry_pathname(entry);
    std::string name = raw_name ? raw_name : "";
    auto type = archive_entry_filetype(entry);
    if (type == AE_IFDIR) continue;
    if (starts_with(name, "/") || starts_with(name, "\\") || is_drive_path(name))
      fail(ErrorKind::invalid, "chart illegally contains absolute paths: '" + name + "'");
    std::string norm = name;
    std::replace(norm.begin(), norm.end(), '\\', '/');
    while (starts_with(norm, "./")) norm.erase(0, 2);
    auto parts = split(norm, '/');
    for (const auto& part : parts)
      if (part == "..") fail(ErrorKind::invalid, "chart illegally references parent directory: '" + name + "'");
    if (parts.size() == 1) {
      if (parts[0] == "Chart.yaml") fail(ErrorKind::invalid, "chart yaml not in base directory");
      fail(ErrorKind::invalid, "chart illegally contains content outside the base directory: '" + name + "'");
    }
    // Drop the top directory and clean the rest (empty and "." components).
    std::vector<std::string> kept;
    for (size_t i = 1; i < parts.size(); ++i)
      if (!parts[i].empty() && parts[i] != ".") kept.push_back(parts[i]);
    if (kept.empty())
      fail(ErrorKind::invalid, "chart illegally contains content outside the base directory: '" + name + "'");
    std::string rel = join(kept, "/");
    if (is_drive_path(rel)) fail(ErrorKind::invalid, "chart contains illegally named files");
    if (type != AE_IFREG)
      fail(ErrorKind::invalid, "chart archive entry '" + name + "' is not a regular file");
    if (archive_entry_size_is_set(entry)) {
      auto declared = static_cast<size_t>(std::max<la_int64_t>(0, archive_entry_size(entry)));
      if (declared > limits.max_file_bytes)
        fail(ErrorKind::invalid, "decompressed chart file '" + name + "' is larger than the maximum file size " +
                                     std::to_string(limits.max_file_bytes));
      if (declared > remaining)
        fail(ErrorKind::invalid, "decompressed chart is larger than the maximum size " +
                                     std::to_string(limits.max_total_bytes));
    }
    std::string data;
    char buf[65536];
    for (;;) {
      la_ssize_t n = archive_read_data(ar.get(), buf, sizeof buf);
      if (n == 0) break;
      if (n < 0) {
        const char* why = archive_error_string(ar.get());
        fail(ErrorKind::invalid, std::string("corrupt or truncated chart archive: ") + (why ? why : "read error"));
      }
      auto got = static_cast<size_t>(n);
      if (data.size() + got > limits.max_file_bytes)
        fail(ErrorKind::invalid, "decompressed chart file '" + name + "' is larger than the maximum file size " +
                                     std::to_string(limits.max_file_bytes));
      if (got > remaining)
        fail(ErrorKind::invalid, "decompressed chart is larger than the maximum size " +
                                     std::to_string(limits.max_total_bytes));
      remaining -= got;
      data.append(buf, got);
    }
    files.push_back({rel, strip_bom(std::move(data))});
  }
  if (files.empty()) fail(ErrorKind::invalid, "no files in chart archive");
  return files;
}

}  // namespace emco::helm
