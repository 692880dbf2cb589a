// The plugins built into emco, listed explicitly (no static-initialiser
// registration, so what is built in is visible in one place). Adding a
// controller, a delivery mechanism or a family of intent kinds is a new room
// in plugins/ plus one line here.

#include "plugins/builtin.hpp"

#include "plugins/ca_certs/plugin.hpp"
#include "plugins/dtc/plugin.hpp"
#include "plugins/gac/plugin.hpp"
#include "plugins/hooks/plugin.hpp"
#include "plugins/hpa/plugin.hpp"
#include "plugins/ncm/plugin.hpp"
#include "plugins/ovnaction/plugin.hpp"
#include "plugins/rollout/plugin.hpp"
#include "plugins/sfc/plugin.hpp"
#include "plugins/tac/plugin.hpp"
#include "plugins/targets/gitops/plugin.hpp"
#include "plugins/targets/kube/plugin.hpp"

namespace emco::plugins {

namespace {

lifecycle::Runtime build() {
  lifecycle::Runtime rt;
  // Delivery mechanisms, in the order they are asked: GitOps first (a GitOps
  // cluster with a kubeconfig is delivered by git), then direct.
  gitops::install(rt);
  kube::install(rt);
  // Controllers and their intent kinds.
  gac::install(rt);
  dtc::install(rt);
  ovnaction::install(rt);
  hpa::install(rt);
  sfc::install(rt);
  ncm::install(rt);
  ca_certs::install(rt);
  tac::install(rt);
  hooks::install(rt);
  rollout::install(rt);
  resource::install_kinds(std::move(rt.kinds));
  rt.kinds.clear();
  return rt;
}

}  // namespace

const lifecycle::Runtime& builtin_runtime() {
  // Never destroyed: nothing needs it at exit, and destroying it was work at every exit.
  static const lifecycle::Runtime& runtime = *new lifecycle::Runtime(build());
  return runtime;
}

}  // namespace emco::plugins
