#pragma once
// GAC, the generic action controller (spec/placement-and-actions.md §5):
// for every resource of the generic k8s intent the group intent names, and
// every customization of it (a resource without customizations does nothing):
//   - targets: the clusters of the resource's app; with clusterSpecific
//     "true" only those matching clusterInfo (scope name: the cluster name;
//     scope label: the cluster carries the label) with mode "allow". Mode
//     "deny" matches no cluster at all, as upstream's code does (its docs
//     describe "all but these"; emco follows the code);
//   - newObject "true": builds the object (ConfigMap/Secret from the template
//     or empty, plus one data entry per uploaded file, named by
//     dataKeyOptions or the file name; Secret values base64-encoded; other
//     kinds from the template), applies the patch if any and adds it to
//     every target cluster as "<name>+<kind>" at the end of resorder;
//   - newObject "false": patches the existing "<name>+<kind>" on every
//     target cluster that has it (patchType required);
//   - patchType json: RFC 6902 patchJson; merge: strategic merge patch with
//     every uploaded file (for ConfigMap/Secret only files flagged
//     mergePatch) in upload order, built-in kinds only.
// Patch values of the form $(http…)$ read a value from EMCO's HTTP API in
// upstream; emco plans offline and rejects them with Error(invalid).
// Identical inputs are patched once and the result is shared by all clusters.

#include "core/plan/controllers.hpp"

namespace emco::controllers {

class Gac : public ActionController {
public:
  void update(const Call& call, appcontext::AppContext& ctx) const override;
};

}  // namespace emco::controllers
