#include "cli/docs.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cli/context.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

namespace {

std::string troff_escape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else if ((c == '.' || c == '\'') && (i == 0 || s[i - 1] == '\n')) out += "\\&" + std::string(1, c);
    else out += c;
  }
  return out;
}

std::string flag_synopsis(const FlagSpec& f) {
  std::string s;
  if (f.short_name) s += std::string("\\-") + f.short_name + ", ";
  s += "\\-\\-" + troff_escape(f.name);
  if (!f.value.empty()) s += " \\fI" + f.value + "\\fR";
  return s;
}

void man_flags(std::ostringstream& m, const std::vector<FlagSpec>& flags) {
  for (const auto& f : flags) {
    m << ".TP\n.B " << flag_synopsis(f) << "\n" << troff_escape(f.help);
    if (!f.choices.empty()) m << " (" << troff_escape(join(f.choices, "|")) << ")";
    if (!f.default_value.empty()) m << " [default: " << troff_escape(f.default_value) << "]";
    if (f.repeatable) m << " (repeatable)";
    m << "\n";
  }
}

void man_command(std::ostringstream& m, const CommandSpec& c) {
  std::string usage = "emco " + join(c.path, " ");
  for (const auto& a : c.args) usage += a.optional ? " [" + a.name + (a.variadic ? "..." : "") + "]" : " " + a.name + (a.variadic ? "..." : "");
  m << ".SS \"" << troff_escape(usage) << "\"\n" << troff_escape(c.summary) << ".\n";
  if (!c.description.empty()) m << ".PP\n" << troff_escape(c.description) << "\n";
  if (!c.args.empty()) {
    for (const auto& a : c.args) m << ".TP\n.I " << a.name << "\n" << troff_escape(a.help) << "\n";
  }
  man_flags(m, c.flags);
  if (!c.examples.empty()) {
    m << ".PP\nExamples:\n.RS\n.nf\n";
    for (const auto& e : c.examples) m << troff_escape(e) << "\n";
    m << ".fi\n.RE\n";
  }
}

bool is_noun(const std::string& word) {
  for (const auto& n : nouns())
    if (n.name == word) return true;
  return false;
}

std::vector<const CommandSpec*> visible() {
  std::vector<const CommandSpec*> v;
  for (const auto& c : commands())
    if (!c.hidden) v.push_back(&c);
  return v;
}

}  // namespace

std::map<std::string, std::string> generate_man_pages() {
  std::map<std::string, std::string> pages;
  {
    std::ostringstream m;
    // Left-adjusted: long flag and anchor words cannot be justified (groff -ww warns).
    m << ".TH EMCO 1 \"\" \"emco\" \"emco manual\"\n.ad l\n.SH NAME\nemco \\- edge multi-cluster orchestration from a local workspace\n"
      << ".SH SYNOPSIS\n.B emco\n\\fICOMMAND\\fR [\\fIFLAGS\\fR] [\\fIARGS\\fR]\n"
      << ".SH DESCRIPTION\nemco registers clusters, describes composite applications made of Helm charts, places\n"
      << "them on clusters by intent and deploys them, keeping everything in a local SQLite workspace\n"
      << "(\\fI.emco/\\fR, found by walking up from the current directory like git).\n"
      << "Batch files use the emcoctl format; \\fBemco ctl\\fR (or a symlink named \\fBemcoctl\\fR) accepts emcoctl's flags.\n"
      << ".SH COMMANDS\n";
    for (const auto* c : visible())
      if (!is_noun(c->path[0])) man_command(m, *c);
    m << ".SH RESOURCE COMMANDS\n";
    for (const auto& n : nouns()) m << ".TP\n.BR emco\\-" << n.name << " (1)\n" << troff_escape(n.summary) << "\n";
    m << ".SH GLOBAL FLAGS\n";
    man_flags(m, global_flags());
    m << ".SH EXIT STATUS\n";
    for (const auto& e : exit_code_docs()) m << ".TP\n.B " << e.code << "\n" << troff_escape(e.meaning) << "\n";
    m << ".SH ENVIRONMENT\n.TP\n.B EMCO_WORKSPACE\nthe workspace directory, when \\-\\-workspace is not given\n"
      << ".TP\n.B EMCO_STORE\nthe PostgreSQL URL \\fBemco init\\fR keeps a new workspace in, when \\-\\-store is not given\n"
      << ".TP\n.B PGHOST, PGUSER, PGPASSWORD, PGSERVICE, PGSSLMODE, ...\nlibpq's connection settings and credentials for "
         "a PostgreSQL workspace (also ~/.pgpass and service files)\n"
      << ".SH FILES\n.TP\n.I .emco/emco.db\nthe workspace database (mode 0600, in a 0700 directory)\n"
      << ".TP\n.I .emco/store\nthe URL of a PostgreSQL workspace's database (no password)\n"
      << ".SH SEE ALSO\n";
    std::vector<std::string> refs;
    for (const auto& n : nouns()) refs.push_back(".BR emco\\-" + n.name + " (1)");
    m << join(refs, ",\n") << "\n";
    pages["emco.1"] = m.str();
  }
  for (const auto& n : nouns()) {
    std::ostringstream m;
    std::string upper = n.name;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    m << ".TH EMCO\\-" << upper << " 1 \"\" \"emco\" \"emco manual\"\n.ad l\n.SH NAME\nemco\\-" << n.name << " \\- " << troff_escape(n.summary)
      << "\n.SH SYNOPSIS\n.B emco " << n.name << "\n\\fICOMMAND\\fR [\\fIFLAGS\\fR] [\\fIARGS\\fR]\n.SH COMMANDS\n";
    for (const auto* c : visible())
      if (c->path[0] == n.name) man_command(m, *c);
    m << ".SH GLOBAL FLAGS\n";
    man_flags(m, global_flags());
    m << ".SH SEE ALSO\n.BR emco (1)\n";
    pages["emco-" + n.name + ".1"] = m.str();
  }
  return pages;
}

std::string generate_bash_completion() {
  std::ostringstream s;
  s << "# bash completion for emco (generated by 'emco __docs bash'; do not edit)\n"
    << "_emco() {\n"
    << "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} path=\"\" w i\n"
    << "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
    << "    w=${COMP_WORDS[i]}\n"
    << "    [[ $w == -* ]] && break\n"
    << "    case \" $(_emco_children \"$path\") \" in *\" $w \"*) path=\"${path:+$path }$w\" ;; *) break ;; esac\n"
    << "  done\n"
    << "  case \"$prev\" in\n";
  std::set<std::string> file_flags, dir_flags;
  std::map<std::string, std::set<std::string>> choice_flags;
  for (const auto* c : visible())
    for (const auto& f : c->flags) {
      if (f.complete == Complete::file) file_flags.insert("--" + f.name + (f.short_name ? std::string("|-") + f.short_name : ""));
      if (f.complete == Complete::directory) dir_flags.insert("--" + f.name);
      if (!f.choices.empty()) choice_flags["--" + f.name + (f.short_name ? std::string("|-") + f.short_name : "")].insert(f.choices.begin(), f.choices.end());
    }
  for (const auto& g : global_flags())
    if (g.complete == Complete::directory) dir_flags.insert("--" + g.name);
  for (const auto& f : file_flags) s << "    " << f << ") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n";
  for (const auto& f : dir_flags) s << "    " << f << ") COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n";
  for (const auto& [f, ch] : choice_flags)
    s << "    " << f << ") COMPREPLY=($(compgen -W \"" << join(std::vector<std::string>(ch.begin(), ch.end()), " ")
      << "\" -- \"$cur\")); return ;;\n";
  s << "  esac\n"
    << "  if [[ $cur == -* ]]; then\n"
    << "    COMPREPLY=($(compgen -W \"$(_emco_flags \"$path\")\" -- \"$cur\"))\n"
    << "  else\n"
    << "    COMPREPLY=($(compgen -W \"$(_emco_children \"$path\")\" -- \"$cur\"))\n"
    << "  fi\n"
    << "}\n"
    << "_emco_children() {\n  case \"$1\" in\n";
  std::map<std::string, std::set<std::string>> children;
  std::map<std::string, std::vector<std::string>> flags;
  for (const auto* c : visible()) {
    for (size_t i = 0; i < c->path.size(); ++i)
      children[join(std::vector<std::string>(c->path.begin(), c->path.begin() + static_cast<std::ptrdiff_t>(i)), " ")].insert(c->path[i]);
    auto& fl = flags[join(c->path, " ")];
    for (const auto& f : c->flags) fl.push_back("--" + f.name);
    for (const auto& g : global_flags()) fl.push_back("--" + g.name);
  }
  for (const auto& n : nouns()) children[""].insert(n.name);
  for (const auto& [p, ch] : children)
    s << "    \"" << p << "\") echo \"" << join(std::vector<std::string>(ch.begin(), ch.end()), " ") << "\" ;;\n";
  s << "  esac\n}\n_emco_flags() {\n  case \"$1\" in\n";
  for (const auto& [p, fl] : flags) s << "    \"" << p << "\") echo \"" << join(fl, " ") << "\" ;;\n";
  s << "    *) echo \"--help --workspace --quiet\" ;;\n  esac\n}\ncomplete -F _emco emco\n";
  return s.str();
}

std::string generate_zsh_completion() {
  std::ostringstream s;
  s << "#compdef emco\n# zsh completion for emco (generated by 'emco __docs zsh'; do not edit)\n"
    << "_emco() {\n  local -a words_list\n  local path_words=\"${(j: :)${words[2,CURRENT-1]:#-*}}\"\n"
    << "  if [[ $words[CURRENT] == -* ]]; then\n    case \"$path_words\" in\n";
  for (const auto* c : visible()) {
    std::vector<std::string> fl;
    for (const auto& f : c->flags) fl.push_back("--" + f.name);
    for (const auto& g : global_flags()) fl.push_back("--" + g.name);
    s << "      \"" << join(c->path, " ") << "\"*) compadd -- " << join(fl, " ") << " ;;\n";
  }
  s << "    esac\n    return\n  fi\n  case \"$path_words\" in\n";
  std::map<std::string, std::set<std::string>> children;
  for (const auto* c : visible())
    for (size_t i = 0; i < c->path.size(); ++i)
      children[join(std::vector<std::string>(c->path.begin(), c->path.begin() + static_cast<std::ptrdiff_t>(i)), " ")].insert(c->path[i]);
  for (const auto& [p, ch] : children)
    s << "    \"" << p << "\") compadd -- " << join(std::vector<std::string>(ch.begin(), ch.end()), " ") << " ;;\n";
  s << "    *) _files ;;\n  esac\n}\n_emco \"$@\"\n";
  return s.str();
}

std::string generate_fish_completion() {
  std::ostringstream s;
  s << "# fish completion for emco (generated by 'emco __docs fish'; do not edit)\n"
    << "function __emco_path_is\n    set -l words (commandline -opc)[2..-1]\n    set -l path\n"
    << "    for w in $words\n        string match -q -- '-*' $w; and break\n        set path $path $w\n    end\n"
    << "    test \"$path\" = \"$argv\"\nend\n";
  std::map<std::string, std::map<std::string, std::string>> children;
  for (const auto* c : visible()) {
    for (size_t i = 0; i < c->path.size(); ++i) {
      std::string parent = join(std::vector<std::string>(c->path.begin(), c->path.begin() + static_cast<std::ptrdiff_t>(i)), " ");
      std::string summary = i + 1 == c->path.size() ? c->summary : "";
      for (const auto& n : nouns())
        if (i == 0 && n.name == c->path[0]) summary = n.summary;
      children[parent].emplace(c->path[i], summary);
    }
  }
  for (const auto& [p, ch] : children)
    for (const auto& [w, summary] : ch)
      s << "complete -c emco -f -n '__emco_path_is " << p << "' -a " << w << " -d '" << summary << "'\n";
  for (const auto* c : visible())
    for (const auto& f : c->flags) {
      s << "complete -c emco -n '__emco_path_is " << join(c->path, " ") << "' -l " << f.name;
      if (f.short_name) s << " -s " << f.short_name;
      if (!f.value.empty()) s << (f.complete == Complete::file || f.complete == Complete::directory ? " -r -F" : " -r -f");
      if (!f.choices.empty()) s << " -a '" << join(f.choices, " ") << "'";
      s << " -d '" << f.help << "'\n";
    }
  for (const auto& g : global_flags()) {
    s << "complete -c emco -l " << g.name;
    if (g.short_name) s << " -s " << g.short_name;
    if (!g.value.empty()) s << " -r";
    s << " -d '" << g.help << "'\n";
  }
  return s.str();
}

int run_docs(Context& ctx, const Invocation& inv) {
  namespace fs = std::filesystem;
  const std::string& what = inv.args.at(0);
  fs::path dir = inv.args.at(1);
  fs::create_directories(dir);
  std::map<std::string, std::string> files;
  if (what == "man") files = generate_man_pages();
  else if (what == "bash") files["emco.bash"] = generate_bash_completion();
  else if (what == "zsh") files["_emco"] = generate_zsh_completion();
  else if (what == "fish") files["emco.fish"] = generate_fish_completion();
  else fail(ErrorKind::usage, "unknown docs kind '" + what + "'", "use man, bash, zsh or fish");
  for (const auto& [name, text] : files) {
    std::ofstream out(dir / name, std::ios::binary);
    out << text;
    ctx.note("wrote " + (dir / name).string());
  }
  return 0;
}

}  // namespace emco::cli
