// Argument parsing and help text, both driven by the command table.

#include <algorithm>
#include <ostream>
#include <set>

#include "cli/table.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

std::string Invocation::get(const std::string& flag, const std::string& fallback) const {
  auto it = flags.find(flag);
  return it == flags.end() || it->second.empty() ? fallback : it->second.back();
}

long long Invocation::get_int(const std::string& flag, long long fallback) const {
  if (!has(flag)) return fallback;
  const std::string text = get(flag);
  try {
    size_t used = 0;
    long long v = std::stoll(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
    // not a number, or out of range: the error below
  }
  fail(ErrorKind::usage, "'--" + flag + " " + text + "' is not a whole number");
}

const std::vector<std::string>& Invocation::all(const std::string& flag) const {
  static const std::vector<std::string> none;
  auto it = flags.find(flag);
  return it == flags.end() ? none : it->second;
}

const std::vector<FlagSpec>& global_flags() {
  static const std::vector<FlagSpec> g = {
      {.name = "workspace", .value = "DIR", .help = "use the workspace in DIR instead of searching upwards (also EMCO_WORKSPACE)",
       .complete = Complete::directory},
      {.name = "help", .short_name = 'h', .help = "show help for the command"},
      {.name = "quiet", .short_name = 'q', .help = "print only errors and requested data"},
  };
  return g;
}

const std::vector<NounSpec>& nouns() {
  static const std::vector<NounSpec> n = {
      {"cluster", "register cluster providers, clusters, labels, kv pairs and sync objects"},
      {"project", "manage projects"},
      {"app", "manage composite apps, apps (Helm charts), composite profiles and app profiles"},
      {"dig", "manage deployment intent groups, their intents and lifecycle"},
      {"lc", "manage logical clouds, cluster references, quotas and permissions"},
      {"controller", "register placement and action controllers"},
      {"sim", "run simulated Kubernetes clusters on this machine"},
      {"ctl", "run emcoctl commands (compatibility mode; also as 'emcoctl')"},
  };
  return n;
}

std::vector<CommandSpec> plan_commands();  // dig plan|render|explain (cli/cmd_plan.cpp)

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec> all = [] {
    std::vector<CommandSpec> v = core_commands();
    for (auto& c : resource_commands()) v.push_back(std::move(c));
    for (auto& c : deploy_commands()) v.push_back(std::move(c));
    for (auto& c : lc_commands()) v.push_back(std::move(c));
    for (auto& c : plan_commands()) v.push_back(std::move(c));  // cli/cmd_plan.cpp
    for (auto& c : tool_commands()) v.push_back(std::move(c));
    for (auto& c : ctl_commands()) v.push_back(std::move(c));
    return v;
  }();
  return all;
}

namespace {

std::string path_text(const std::vector<std::string>& path) { return join(path, " "); }

bool is_prefix(const std::vector<std::string>& prefix, const std::vector<std::string>& path) {
  return prefix.size() <= path.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

const FlagSpec* find_flag(const CommandSpec& c, const std::string& name, char short_name) {
  for (const auto* list : {&c.flags, &global_flags()})
    for (const auto& f : *list)
      if ((!name.empty() && f.name == name) || (short_name && f.short_name == short_name)) return &f;
  return nullptr;
}

std::string usage_line(const CommandSpec& c) {
  std::string u = "emco " + path_text(c.path);
  if (!c.flags.empty()) u += " [flags]";
  for (const auto& a : c.args) {
    std::string n = a.name + (a.variadic ? "..." : "");
    u += a.optional ? " [" + n + "]" : " " + n;
  }
  return u;
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
  std::set<std::string> shown_nouns;
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

std::optional<Invocation> parse(const std::vector<std::string>& argv, std::ostream& out) {
  // Split words (command path + positional args) from flags, keeping order.
  std::vector<std::string> words;
  size_t first_flag = argv.size();
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i].size() > 1 && argv[i][0] == '-') {
      first_flag = i;
      break;
    }
    words.push_back(argv[i]);
  }
  if (words.empty() || words[0] == "help") {
    std::vector<std::string> topic(words.empty() ? words.begin() : words.begin() + 1, words.end());
    bool asked_help = !words.empty() || std::find(argv.begin(), argv.end(), "--help") != argv.end() ||
                      std::find(argv.begin(), argv.end(), "-h") != argv.end();
    if (words.empty() && !asked_help && first_flag < argv.size() && argv[first_flag] == "--version") {
      Invocation inv;
      for (const auto& c : commands())
        if (c.path == std::vector<std::string>{"version"}) inv.command = &c;
      return inv;
    }
    if (!asked_help && words.empty())
      fail(ErrorKind::usage, "no command given", "run 'emco --help' to see the commands");
    for (const auto& c : commands())
      if (c.path == topic) {
        print_command_help(c, out);
        return std::nullopt;
      }
    print_group_help(topic, out);
    return std::nullopt;
  }

  // The longest command path that matches the leading words.
  const CommandSpec* best = nullptr;
  for (const auto& c : commands()) {
    if (c.path.size() <= words.size() && std::equal(c.path.begin(), c.path.end(), words.begin()) &&
        (!best || c.path.size() > best->path.size()))
      best = &c;
  }
  bool wants_help = std::find(argv.begin(), argv.end(), "--help") != argv.end() ||
                    std::find(argv.begin(), argv.end(), "-h") != argv.end();
  if (!best) {
    // A noun (group) alone, or an unknown word.
    std::vector<std::string> group;
    for (const auto& w : words) {
      group.push_back(w);
      bool any = false;
      for (const auto& c : commands()) any = any || is_prefix(group, c.path);
      if (!any) {
        group.pop_back();
        std::vector<std::string> candidates;
        for (const auto& c : commands())
          if (!c.hidden && is_prefix(group, c.path) && c.path.size() > group.size()) candidates.push_back(c.path[group.size()]);
        std::string guess = closest_match(w, candidates);
        fail(ErrorKind::usage, "unknown command '" + path_text(group.empty() ? std::vector<std::string>{w} : group) +
                                   (group.empty() ? "" : " " + w) + "'",
             guess.empty() ? "run 'emco " + path_text(group) + (group.empty() ? "" : " ") + "--help' to see the commands"
                           : "did you mean '" + path_text(group) + (group.empty() ? "" : " ") + guess + "'?");
      }
    }
    if (!wants_help && group.size() == words.size() && !group.empty()) {
      print_group_help(group, out);
      return std::nullopt;
    }
    print_group_help(group, out);
    return std::nullopt;
  }
  if (wants_help) {
    print_command_help(*best, out);
    return std::nullopt;
  }

  Invocation inv;
  inv.command = best;
  for (size_t i = best->path.size(); i < words.size(); ++i) inv.args.push_back(words[i]);
  for (size_t i = first_flag; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--") {
      for (size_t j = i + 1; j < argv.size(); ++j) inv.args.push_back(argv[j]);
      break;
    }
    if (a.size() < 2 || a[0] != '-' || a == "-") {
      inv.args.push_back(a);
      continue;
    }
    std::string name, value;
    bool has_value = false;
    const FlagSpec* f = nullptr;
    if (a[1] == '-') {
      name = a.substr(2);
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
      f = find_flag(*best, name, 0);
    } else {
      f = find_flag(*best, "", a[1]);
      if (a.size() > 2) {
        value = a.substr(2);
        has_value = true;
      }
      name = f ? f->name : a.substr(1, 1);
    }
    if (!f) {
      std::vector<std::string> names;
      for (const auto& x : best->flags) names.push_back(x.name);
      for (const auto& x : global_flags()) names.push_back(x.name);
      std::string guess = closest_match(name, names);
      fail(ErrorKind::usage, "unknown flag '" + a + "' for 'emco " + path_text(best->path) + "'",
           guess.empty() ? "run 'emco " + path_text(best->path) + " --help' to see its flags" : "did you mean '--" + guess + "'?");
    }
    if (f->value.empty()) {
      if (has_value) fail(ErrorKind::usage, "flag '--" + f->name + "' takes no value");
      inv.flags[f->name].push_back("");
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argv.size())
        fail(ErrorKind::usage, "flag '--" + f->name + "' needs a value (" + f->value + ")");
      value = argv[++i];
    }
    if (!f->choices.empty() && std::find(f->choices.begin(), f->choices.end(), value) == f->choices.end())
      fail(ErrorKind::usage, "invalid value '" + value + "' for '--" + f->name + "'", "allowed values are " + join(f->choices, ", "));
    if (!f->repeatable && inv.flags.count(f->name) && f->name != "workspace")
      fail(ErrorKind::usage, "flag '--" + f->name + "' given more than once");
    inv.flags[f->name].push_back(value);
  }
  for (const auto& f : best->flags)
    if (!f.default_value.empty() && !inv.flags.count(f.name)) inv.flags[f.name].push_back(f.default_value);

  // Positional argument count.
  size_t required = 0, max = 0;
  bool variadic = false;
  for (const auto& a : best->args) {
    if (!a.optional) ++required;
    ++max;
    variadic = variadic || a.variadic;
  }
  if (inv.args.size() < required)
    fail(ErrorKind::usage, "'emco " + path_text(best->path) + "' needs " + best->args[inv.args.size()].name,
         "usage: " + usage_line(*best));
  if (!variadic && inv.args.size() > max)
    fail(ErrorKind::usage, "unexpected argument '" + inv.args[max] + "' for 'emco " + path_text(best->path) + "'",
         "usage: " + usage_line(*best));
  return inv;
}

}  // namespace emco::cli
