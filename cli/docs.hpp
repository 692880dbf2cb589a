#pragma once
// Man pages (troff) and bash/zsh/fish completions generated from the command
// table. `emco __docs man|bash|zsh|fish DIR` writes them; the committed copies
// in manpages/ and completions/ are checked against a fresh generation by
// tests/cli.

#include <map>
#include <string>

#include "cli/table.hpp"

namespace emco::cli {

// File name -> content.
std::map<std::string, std::string> generate_man_pages();
std::string generate_bash_completion();
std::string generate_zsh_completion();
std::string generate_fish_completion();

int run_docs(Context& ctx, const Invocation& inv);

}  // namespace emco::cli
