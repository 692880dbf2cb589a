// Help text, printed from the command table (CLI11 parses the command line in
// cli/parse.cpp; the table alone documents it, so --help, the man pages and
// the completions cannot disagree).

#include <algorithm>
#include <ostream>

#include "cli/table.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

namespace {

std::string path_text(const std::vector<std::string>& path) { return join(path, " "); }

bool is_prefix(const std::vector<std::string>& prefix, const std::vector<std::string>& path) {
  return prefix.size() <= path.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

std::string flag_label(const FlagSpec& f) {
  std::string s = f.short_name ? std::string("-") + f.short_name + ", " : "    ";
  s += "--" + f.name;
  if (!f.value.empty()) s += " " + f.value;
  return s;
}

void print_flags(const std::vector<FlagSpec>& flags, std::ostream& out) {
  size_t width = 0;
  for (const auto& f : flags) width = std::max(width, flag_label(f).size());
  for (const auto& f : flags) {
    std::string label = flag_label(f);
    out << "  " << label << std::string(width - label.size() + 2, ' ') << f.help;
    if (!f.choices.empty()) out << " (" << join(f.choices, "|") << ")";
    if (!f.default_value.empty()) out << " [default: " << f.default_value << "]";
    if (f.repeatable) out << " (repeatable)";
    out << "\n";
  }
}

}  // namespace

std::string usage_line(const CommandSpec& c) {
  std::string u = "emco " + path_text(c.path);
  if (!c.flags.empty()) u += " [flags]";
  for (const auto& a : c.args) {
    std::string n = a.name + (a.variadic ? "..." : "");
    u += a.optional ? " [" + n + "]" : " " + n;
  }
  return u;
}

void print_command_help(const CommandSpec& c, std::ostream& out) {
  out << "usage: " << usage_line(c) << "\n\n" << c.summary << "\n";
  if (!c.description.empty()) out << "\n" << c.description << "\n";
  if (!c.args.empty()) {
    out << "\narguments:\n";
    size_t width = 0;
    for (const auto& a : c.args) width = std::max(width, a.name.size());
    for (const auto& a : c.args) out << "  " << a.name << std::string(width - a.name.size() + 2, ' ') << a.help << "\n";
  }
  if (!c.flags.empty()) {
    out << "\nflags:\n";
    print_flags(c.flags, out);
  }
  out << "\nglobal flags:\n";
  print_flags(global_flags(), out);
  if (!c.examples.empty()) {
    out << "\nexamples:\n";
    for (const auto& e : c.examples) out << "  " << e << "\n";
  }
}

void print_group_help(const std::vector<std::string>& prefix, std::ostream& out) {
  if (prefix.empty()) {
    out << "usage: emco <command> [flags] [args]\n\n"
           "emco registers clusters, describes composite applications made of Helm charts,\n"
           "places them on clusters by intent and deploys them, from a local workspace.\n\n"
           "workspace and batch files:\n";
  } else {
    std::string summary;
    for (const auto& n : nouns())
      if (n.name == prefix[0] && prefix.size() == 1) summary = n.summary;
    out << "usage: emco " << path_text(prefix) << " <command> [flags] [args]\n\n";
    if (!summary.empty()) out << summary << "\n\n";
    out << "commands:\n";
  }
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& c : commands()) {
    if (c.hidden || !is_prefix(prefix, c.path)) continue;
    if (prefix.empty()) {
      bool is_noun = false;
      for (const auto& n : nouns()) is_noun = is_noun || n.name == c.path[0];
      if (is_noun) continue;
    }
    rows.emplace_back(path_text(std::vector<std::string>(c.path.begin() + static_cast<std::ptrdiff_t>(prefix.size()), c.path.end())),
                      c.summary);
  }
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.first.size());
  if (prefix.empty())
    for (const auto& n : nouns()) width = std::max(width, n.name.size());
  for (const auto& [name, summary] : rows) out << "  " << name << std::string(width - name.size() + 2, ' ') << summary << "\n";
  if (prefix.empty()) {
    out << "\nresources:\n";
    for (const auto& n : nouns()) out << "  " << n.name << std::string(width - n.name.size() + 2, ' ') << n.summary << "\n";
    out << "\nRun 'emco <command> --help' for a command's flags, 'man emco' for exit codes and files.\n";
  }
}

}  // namespace emco::cli
