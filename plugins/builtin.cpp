// The controllers built into emco, listed explicitly (no static-initialiser
// registration, so what is built in is visible in one place).
#include <memory>

#include "plugins/actions/controller.hpp"
#include "plugins/actions/gac.hpp"

namespace emco::controllers {

const Registry& builtin() {
  static const Registry registry = [] {
    Registry r;
    r.add_action("gac", std::make_unique<Gac>());
    return r;
  }();
  return registry;
}

}  // namespace emco::controllers
