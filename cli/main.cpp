#include <sys/stat.h>

#include <filesystem>
#include <iostream>

#include "cli/app.hpp"
#include "core/util/allocator.hpp"

int main(int argc, char** argv) {
  emco::tune_allocator();
  // Everything emco writes in a workspace holds or may hold credentials.
  ::umask(077);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (std::filesystem::path(argv[0]).filename() == "emcoctl") args.insert(args.begin(), "ctl");
  return emco::cli::run(args, std::cout, std::cerr);
}
