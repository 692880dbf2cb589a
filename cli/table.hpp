#pragma once
// The command table: every emco command as data. One table drives argument
// parsing, --help, the man pages in manpages/ and the bash/zsh/fish
// completions in completions/ (cli/docs.cpp); tests/cli checks that the
// committed files agree with it.

#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace emco::cli {

// What a flag's or argument's value completes to.
enum class Complete { none, file, directory, anchor, choice };

struct FlagSpec {
  std::string name;                  // long name without dashes ("output")
  char short_name = 0;               // 'o', or 0
  std::string value;                 // value placeholder ("FORMAT"); empty = boolean switch
  std::string help;
  bool repeatable = false;
  std::vector<std::string> choices;  // allowed values (completion and validation)
  Complete complete = Complete::none;
  std::string default_value;
};

struct ArgSpec {
  std::string name;  // "NAME", "FILE"
  std::string help;
  bool optional = false;
  bool variadic = false;
  Complete complete = Complete::none;
};

class Context;
struct Invocation;
using Handler = std::function<int(Context&, const Invocation&)>;

struct CommandSpec {
  std::vector<std::string> path;  // {"cluster", "label", "add"}
  std::string summary;            // one line, lowercase, no final period
  std::string description;        // paragraphs for --help and the man page
  std::vector<ArgSpec> args;
  std::vector<FlagSpec> flags;
  bool needs_workspace = true;    // opens the workspace before running
  // The handler's Context::runtime() gives the plugins (built on its first
  // call); false only for a handler that uses none (version). A kind lookup
  // that core cannot answer builds them either way (resource::set_kind_loader).
  bool needs_plugins = true;
  bool hidden = false;            // internal commands (docs generator)
  std::vector<std::string> examples;
  Handler handler;
};

// Global flags every command accepts (--workspace, --help, ...).
const std::vector<FlagSpec>& global_flags();

// The whole table, in display order (for help, docs and suggestions: a
// command line is parsed with commands_for).
const std::vector<CommandSpec>& commands();
// The commands that can start with `words` (a command line's leading words):
// those of the sections filed under the first two words when there are any
// ("dig hook", "dig status"), else those filed under the first word alone (a
// noun's: "cluster", "dig"), or the top-level verbs' when no section is filed
// under the first. Builds only those sections; every command whose path
// starts with the words' first two is among them (tests/cli checks).
std::vector<const CommandSpec*> commands_for(const std::vector<std::string>& words);

// Noun groups ("cluster", "app", ...) with their one-line summary, for help
// and one man page per noun.
struct NounSpec {
  std::string name;
  std::string summary;
};
const std::vector<NounSpec>& nouns();

struct Invocation {
  const CommandSpec* command = nullptr;
  std::vector<std::string> args;
  std::map<std::string, std::vector<std::string>> flags;  // long name -> values ("" for switches)

  bool has(const std::string& flag) const { return flags.count(flag) > 0; }
  std::string get(const std::string& flag, const std::string& fallback = "") const;
  // The flag's value as a whole number (`fallback` when absent); Error(usage)
  // naming the flag when it is not one (trailing characters included).
  long long get_int(const std::string& flag, long long fallback = 0) const;
  // As get_int, and Error(usage) naming the flag when outside int's range.
  int get_int32(const std::string& flag, int fallback) const;
  // The flag's value as a number (`fallback` when absent); Error(usage)
  // naming the flag when it does not start with one.
  double get_double(const std::string& flag, double fallback) const;
  const std::vector<std::string>& all(const std::string& flag) const;
};

// Parses argv (without the program name; cli/parse.cpp, with CLI11). The
// leading words name the command; its flags and arguments follow in any
// order: `--flag value`, `--flag=value`, `-fvalue`, combined short switches
// (`-qw`), `--` before arguments that start with '-'. A value-taking flag
// takes the next word whatever it is. Throws Error(usage) with a "did you
// mean" hint for unknown commands and flags, and for a missing or surplus
// argument, a missing value, a value outside the flag's choices, a value
// given to a switch, a non-repeatable flag given twice. Fills in the table's
// defaults. Returns nullopt after printing help (--help or -h anywhere,
// `emco help X`, a bare noun).
std::optional<Invocation> parse(const std::vector<std::string>& argv, std::ostream& out);

// Help text of one command / of a noun / of the whole program (cli/help.cpp).
void print_command_help(const CommandSpec& c, std::ostream& out);
void print_group_help(const std::vector<std::string>& prefix, std::ostream& out);
// "emco cluster create [flags] PROVIDER/CLUSTER": the first line of --help.
std::string usage_line(const CommandSpec& c);

// Sections of the table, one per file, concatenated by commands() in this
// order: each file holds a noun's (or the top-level verbs') table section
// and handlers.
std::vector<CommandSpec> verb_commands();        // cli/verbs.cpp: init, apply, update, get, delete, version, status, sync, template
std::vector<CommandSpec> cluster_commands();     // cli/nouns/cluster.cpp
std::vector<CommandSpec> project_commands();     // cli/nouns/project.cpp
std::vector<CommandSpec> app_commands();         // cli/nouns/app.cpp
std::vector<CommandSpec> dig_commands();         // cli/nouns/dig.cpp
std::vector<CommandSpec> dig_status_commands();  // cli/nouns/dig.cpp: dig status
std::vector<CommandSpec> dig_intent_commands();      // cli/nouns/dig.cpp: dig intent
std::vector<CommandSpec> dig_placement_commands();   // cli/nouns/dig.cpp: dig placement
std::vector<CommandSpec> dig_app_intent_commands();  // cli/nouns/dig.cpp: dig app-intent
std::vector<CommandSpec> hook_commands();        // cli/nouns/hook.cpp: dig hook (tac)
std::vector<CommandSpec> workflow_commands();    // cli/nouns/hook.cpp: dig workflow (workflow manager)
std::vector<CommandSpec> emco_hook_commands();   // cli/nouns/hook.cpp: dig emco-hook (emco's own hooks)
std::vector<CommandSpec> rollout_commands();           // cli/nouns/rollout.cpp: dig rollout (status, resume, abort)
std::vector<CommandSpec> rollout_strategy_commands();  // cli/nouns/rollout.cpp: dig rollout-strategy (the resources)
std::vector<CommandSpec> lc_commands();          // cli/nouns/lc.cpp
std::vector<CommandSpec> cert_commands();        // cli/nouns/cert.cpp
std::vector<CommandSpec> controller_commands();  // cli/nouns/controller.cpp
std::vector<CommandSpec> sim_commands();         // cli/nouns/sim.cpp
std::vector<CommandSpec> ctl_commands();         // cli/nouns/ctl.cpp: emcoctl compatibility
std::vector<CommandSpec> workspace_commands();   // cli/nouns/workspace.cpp: export, import, key
std::vector<CommandSpec> serve_commands();       // cli/serve/serve.cpp: the REST API server

}  // namespace emco::cli
