#include "cli/app.hpp"

#include <iostream>

#include "cli/context.hpp"
#include "cli/table.hpp"
#include "core/util/error.hpp"

namespace emco::cli {

namespace {

int report(std::ostream& err, const Error& e) {
  err << "emco: error: " << e.message() << "\n";
  if (!e.hint().empty()) err << "hint: " << e.hint() << "\n";
  return static_cast<int>(exit_code(e.kind()));
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    install_content_validators();
    auto inv = parse(args, out);
    if (!inv) return 0;
    std::optional<std::string> ws;
    if (inv->has("workspace")) ws = inv->get("workspace");
    Context ctx(out, err, ws);
    ctx.quiet = inv->has("quiet");
    if (inv->command->needs_workspace) ctx.workspace();
    int code = inv->command->handler(ctx, *inv);
    out.flush();
    if (!out) {
      err << "emco: error: cannot write output\n";
      return static_cast<int>(ExitCode::failed);
    }
    return code;
  } catch (const Error& e) {
    return report(err, e);
  } catch (const std::exception& e) {
    err << "emco: error: internal error: " << e.what() << "\n"
        << "hint: this is a bug in emco; please report it with the command that caused it\n";
    return static_cast<int>(ExitCode::internal);
  }
}

}  // namespace emco::cli
