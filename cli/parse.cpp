// Command-line parsing. The table finds the command from the leading words
// (so an unknown one gets a "did you mean" hint from the table's names);
// CLI11 then parses that command's flags and arguments with a parser built
// from its CommandSpec alone, which keeps start-up cheap and leaves no other
// command's name for CLI11 to take an argument for. CLI11's complaints
// become emco's usage errors, worded as before. This is the only file that
// includes CLI11.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <limits>
#include <ostream>

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

int Invocation::get_int32(const std::string& flag, int fallback) const {
  long long v = get_int(flag, fallback);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    fail(ErrorKind::usage, "'--" + flag + " " + get(flag) + "' is out of range");
  return static_cast<int>(v);
}

double Invocation::get_double(const std::string& flag, double fallback) const {
  if (!has(flag)) return fallback;
  try {
    return std::stod(get(flag));
  } catch (const std::exception&) {
    fail(ErrorKind::usage, "'--" + flag + " " + get(flag) + "' is not a number");
  }
}

const std::vector<std::string>& Invocation::all(const std::string& flag) const {
  static const std::vector<std::string> none;
  auto it = flags.find(flag);
  return it == flags.end() ? none : it->second;
}

namespace {

std::string path_text(const std::vector<std::string>& path) { return join(path, " "); }

bool is_prefix(const std::vector<std::string>& prefix, const std::vector<std::string>& path) {
  return prefix.size() <= path.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

// One command's parser. CLI11 keeps what it could not match (unknown flags,
// surplus arguments, a `--`) together with how it classified each token;
// emco reports those itself, so the parser allows extras and exposes that list.
class CommandParser : public CLI::App {
public:
  explicit CommandParser(const CommandSpec& c) : CLI::App("", "emco " + path_text(c.path)) {
    set_help_flag();  // -h/--help is one of the table's global flags; parse() prints emco's help
    allow_extras();
  }
  const missing_t& unmatched() const { return missing_; }
};

struct BoundFlag {
  const FlagSpec* spec;
  CLI::Option* option;
};

// A value outside the flag's choices is refused with the table's list. The
// check throws emco's error itself: CLI11 would prefix its own wording.
CLI::Validator choice_check(const FlagSpec& f) {
  return CLI::Validator(
      [&f](std::string& value) -> std::string {
        if (std::find(f.choices.begin(), f.choices.end(), value) == f.choices.end())
          fail(ErrorKind::usage, "invalid value '" + value + "' for '--" + f.name + "'",
               "allowed values are " + join(f.choices, ", "));
        return {};
      },
      join(f.choices, "|"));
}

CLI::Option* add_flag(CommandParser& app, const FlagSpec& f) {
  std::string names = (f.short_name ? std::string("-") + f.short_name + "," : std::string()) + "--" + f.name;
  if (f.value.empty()) return app.add_flag(names)->disable_flag_override();
  // Exactly one value per occurrence (the next word even when it starts with
  // '-': '--description -x'); every occurrence is kept and repeats of a
  // non-repeatable flag are refused after parsing, in emco's words.
  auto* o = app.add_option(names)->type_name(f.value)->expected(1)->allow_extra_args(false)->multi_option_policy(
      CLI::MultiOptionPolicy::TakeAll);
  if (!f.choices.empty()) o->check(choice_check(f));
  return o;
}

const FlagSpec* flag_in(const std::vector<BoundFlag>& flags, const std::string& name) {
  for (const auto& b : flags)
    if (b.spec->name == name || (name.size() == 1 && b.spec->short_name == name[0])) return b.spec;
  return nullptr;
}

// CLI11 raises ArgumentMismatch for a flag without its value ("--filename: 1
// required FILE missing") and for a switch given one ("stop was given a
// disallowed flag override"); both messages start with the flag's name.
[[noreturn]] void argument_mismatch(const CommandSpec& c, const std::vector<BoundFlag>& flags, const CLI::ArgumentMismatch& e) {
  std::string what = e.what();
  std::string name = what.substr(0, what.find_first_of(": "));
  name.erase(0, name.find_first_not_of('-'));
  if (const FlagSpec* f = flag_in(flags, name)) {
    if (f->value.empty()) fail(ErrorKind::usage, "flag '--" + f->name + "' takes no value");
    fail(ErrorKind::usage, "flag '--" + f->name + "' needs a value (" + f->value + ")");
  }
  fail(ErrorKind::usage, what, "run 'emco " + path_text(c.path) + " --help' to see its flags");
}

// Whether CLI11 could consult `f`'s option for any of the words: a word
// "--NAME" or "--NAME=..." names it, and a word of one dash ("-qh", "-wfoo",
// "-w=1") any of whose letters is its short name may. CLI11 looks an option
// up only by such a word, so leaving out the flags no word names parses
// exactly as with all of them, and building an option was most of parsing
// (a command has a dozen flags, a command line names one or two).
bool mentioned(const FlagSpec& f, const std::vector<std::string>& words) {
  for (const auto& w : words) {
    if (w.size() < 2 || w[0] != '-') continue;
    if (w[1] == '-') {
      const std::string_view name = std::string_view(w).substr(2, w.find('=') == std::string::npos ? std::string::npos : w.find('=') - 2);
      if (name == f.name) return true;
    } else if (f.short_name && w.find(f.short_name, 1) != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::optional<Invocation> parse_command(const CommandSpec& c, const std::vector<std::string>& rest, std::ostream& out) {
  CommandParser app(c);
  std::vector<BoundFlag> flags;  // every flag; those no word names have no option (nothing given)
  for (const auto* list : {&c.flags, &global_flags()})
    for (const auto& f : *list) flags.push_back({&f, mentioned(f, rest) ? add_flag(app, f) : nullptr});
  std::vector<CLI::Option*> args;
  for (size_t i = 0; i < c.args.size(); ++i) {
    // Positionals fill in order; a variadic one takes all the rest. Counts
    // are checked below, after unknown flags, so those are reported first.
    auto* o = app.add_option("arg" + std::to_string(i));
    if (c.args[i].variadic) o->expected(0, CLI::detail::expected_max_vector_size)->allow_extra_args();
    else o->expected(1);
    args.push_back(o);
  }
  std::vector<std::string> reversed(rest.rbegin(), rest.rend());  // CLI11 takes the words last first, consuming them
  try {
    app.parse(reversed);
  } catch (const CLI::ArgumentMismatch& e) {
    argument_mismatch(c, flags, e);
  } catch (const CLI::ParseError& e) {
    fail(ErrorKind::usage, e.what(), "run 'emco " + path_text(c.path) + " --help' to see its flags");
  }

  // -h among combined switches (`-qh`) wins over other mistakes, as a lone -h
  // or --help does (parse() prints help for those before CLI11 runs).
  for (const auto& b : flags)
    if (b.spec->name == "help" && b.option && b.option->count() > 0) {
      print_command_help(c, out);
      return std::nullopt;
    }
  for (const auto& [kind, text] : app.unmatched()) {
    if (kind != CLI::detail::Classifier::LONG && kind != CLI::detail::Classifier::SHORT) continue;
    // "-w=1": CLI11 takes -w as the switch and leaves "-=1"; name the switch.
    if (text.rfind("-=", 0) == 0)
      for (const auto& word : rest)
        if (auto eq = word.find('='); word.size() > 2 && word[0] == '-' && word[1] != '-' && eq != std::string::npos && eq > 1)
          if (const FlagSpec* f = flag_in(flags, word.substr(eq - 1, 1)); f && f->value.empty())
            fail(ErrorKind::usage, "flag '--" + f->name + "' takes no value");
    std::string name = text.substr(text.find_first_not_of('-'));
    name = name.substr(0, name.find('='));
    std::vector<std::string> names;
    for (const auto& b : flags) names.push_back(b.spec->name);
    std::string guess = closest_match(name, names);
    fail(ErrorKind::usage, "unknown flag '" + text + "' for 'emco " + path_text(c.path) + "'",
         guess.empty() ? "run 'emco " + path_text(c.path) + " --help' to see its flags" : "did you mean '--" + guess + "'?");
  }

  Invocation inv;
  inv.command = &c;
  for (const auto& b : flags) {
    const FlagSpec& f = *b.spec;
    static const CLI::results_t none;
    const auto& given = b.option ? b.option->results() : none;
    if (given.empty()) {
      if (!f.default_value.empty()) inv.flags[f.name].push_back(f.default_value);
      continue;
    }
    // --workspace may be repeated (the last one counts), as wrappers that add their own need.
    if (!f.repeatable && given.size() > 1 && f.name != "workspace")
      fail(ErrorKind::usage, "flag '--" + f.name + "' given more than once");
    for (const auto& v : given) inv.flags[f.name].push_back(f.value.empty() ? "" : v);
  }
  for (const auto* o : args)
    for (const auto& v : o->results()) inv.args.push_back(v);

  size_t required = 0;
  for (const auto& a : c.args) required += a.optional ? 0 : 1;
  if (inv.args.size() < required)
    fail(ErrorKind::usage, "'emco " + path_text(c.path) + "' needs " + c.args[inv.args.size()].name, "usage: " + usage_line(c));
  for (const auto& [kind, text] : app.unmatched())
    if (kind == CLI::detail::Classifier::NONE)
      fail(ErrorKind::usage, "unexpected argument '" + text + "' for 'emco " + path_text(c.path) + "'",
           "usage: " + usage_line(c));
  return inv;
}

}  // namespace

std::optional<Invocation> parse(const std::vector<std::string>& argv, std::ostream& out) {
  // The command path: the leading words before the first flag.
  std::vector<std::string> words;
  size_t first_flag = argv.size();
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i].size() > 1 && argv[i][0] == '-') {
      first_flag = i;
      break;
    }
    words.push_back(argv[i]);
  }
  bool wants_help = std::find(argv.begin(), argv.end(), "--help") != argv.end() ||
                    std::find(argv.begin(), argv.end(), "-h") != argv.end();
  if (words.empty() || words[0] == "help") {
    std::vector<std::string> topic(words.empty() ? words.begin() : words.begin() + 1, words.end());
    if (words.empty() && !wants_help && first_flag < argv.size() && argv[first_flag] == "--version") {
      Invocation inv;
      for (const auto* c : commands_for({"version"}))
        if (c->path == std::vector<std::string>{"version"}) inv.command = c;
      return inv;
    }
    if (words.empty() && !wants_help) fail(ErrorKind::usage, "no command given", "run 'emco --help' to see the commands");
    for (const auto& c : commands())
      if (c.path == topic) {
        print_command_help(c, out);
        return std::nullopt;
      }
    print_group_help(topic, out);
    return std::nullopt;
  }

  // The longest command path that matches the leading words, among the
  // commands that can start with them (only their sections are built).
  const CommandSpec* best = nullptr;
  for (const auto* c : commands_for(words)) {
    if (c->path.size() <= words.size() && std::equal(c->path.begin(), c->path.end(), words.begin()) &&
        (!best || c->path.size() > best->path.size()))
      best = c;
  }
  if (!best) {
    // A noun (group) alone prints its help; an unknown word is an error.
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
    print_group_help(group, out);
    return std::nullopt;
  }
  if (wants_help) {
    print_command_help(*best, out);
    return std::nullopt;
  }
  return parse_command(*best, std::vector<std::string>(argv.begin() + static_cast<std::ptrdiff_t>(best->path.size()), argv.end()),
                       out);
}

}  // namespace emco::cli
