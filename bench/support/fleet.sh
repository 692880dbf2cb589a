# Workspace generators shared by the benchmarks that drive the emco commands
# (bench/gitops/emco_cli.sh, bench/scale/run.sh). Source it; every function
# writes emco/v2 documents to stdout.
#
# The shape: provider `edge` with clusters c<N> (zero-padded) labelled `edge`,
# project `bench` with a level-0 logical cloud `admin` over every cluster,
# composite app bench/ca/v1 of APPS apps (the quickstart chart, each with a
# profile giving it its own message), DIG `dig` placing every app on every
# cluster by the label.

# fleet_yaml N gitops REPO_URL
#   N clusters delivered through one shared GitOps repository (fluxcd).
# fleet_yaml N kubeconfig DIR
#   N clusters, cluster i's kubeconfig DIR/<name>.yaml where <name> is line i
#   of the sorted listing of DIR/*.yaml (an `emco sim start --dir` fleet);
#   cluster names stay c<N> so both forms address clusters alike.
fleet_yaml() {
  local n=$1 mode=$2 arg=$3
  if [ "$mode" = kubeconfig ] && [ "$(cd "$arg" && ls | grep -c '\.yaml$')" -lt "$n" ]; then
    echo "fleet_yaml: fewer than $n kubeconfigs in $arg" >&2
    return 1
  fi
  # awk, not a shell loop: 100,000 clusters take a second, not a minute. The
  # kubeconfig names come on stdin (too many for an argument).
  { [ "$mode" != kubeconfig ] || (cd "$arg" && LC_ALL=C ls | sed -n 's/\.yaml$//p'); } |
  awk -v n="$n" -v mode="$mode" -v arg="$arg" 'BEGIN {
    if (mode == "kubeconfig") for (i = 1; (getline line < "/dev/stdin") > 0; i++) kube[i] = line
    width = length(n "")
    printf "version: emco/v2\nresourceContext: {anchor: cluster-providers}\nmetadata: {name: edge}\n"
    if (mode == "gitops") {
      printf "---\nversion: emco/v2\nresourceContext: {anchor: cluster-providers/edge/cluster-sync-objects}\n"
      printf "metadata: {name: gitrepo}\nspec:\n  kv:\n  - {url: \"%s\"}\n  - {branch: main}\n", arg
    }
    for (i = 1; i <= n; i++) {
      c = sprintf("c%0*d", width, i)
      printf "---\nversion: emco/v2\nresourceContext: {anchor: cluster-providers/edge/clusters}\nmetadata: {name: %s}\n", c
      if (mode == "gitops")
        printf "spec:\n  gitOps: {gitOpsType: fluxcd, gitOpsReferenceObject: gitrepo, gitOpsResourceObject: gitrepo}\n"
      else
        printf "file: %s/%s.yaml\n", arg, kube[i]
      printf "---\nversion: emco/v2\nresourceContext: {anchor: cluster-providers/edge/clusters/%s/labels}\nclusterLabel: edge\n", c
    }
    printf "---\nversion: emco/v2\nresourceContext: {anchor: projects}\nmetadata: {name: bench}\n"
    printf "---\nversion: emco/v2\nresourceContext: {anchor: projects/bench/logical-clouds}\nmetadata: {name: admin}\nspec: {level: \"0\"}\n"
    for (i = 1; i <= n; i++) {
      c = sprintf("c%0*d", width, i)
      printf "---\nversion: emco/v2\nresourceContext: {anchor: projects/bench/logical-clouds/admin/cluster-references}\n"
      printf "metadata: {name: %s}\nspec: {clusterProvider: edge, cluster: %s}\n", c, c
    }
    printf "---\nversion: emco/v2\nresourceContext: {anchor: projects/bench/logical-clouds/admin/instantiate}\n"
  }'
}

# apps_yaml APPS CHART_DIR PROFILES_DIR
#   composite app bench/ca/v1 of APPS apps of CHART_DIR and DIG `dig`; writes
#   each app's profile to PROFILES_DIR/app<i> (message: "app <i>").
apps_yaml() {
  local apps=$1 chart=$2 profiles=$3 ca=projects/bench/composite-apps/ca/v1 a
  for a in $(seq 0 $((apps - 1))); do
    mkdir -p "$profiles/app$a"
    printf 'version: v1\ntype:\n  values: "override_values.yaml"\n' > "$profiles/app$a/manifest.yaml"
    printf 'message: "app %s"\n' "$a" > "$profiles/app$a/override_values.yaml"
  done
  printf 'version: emco/v2\nresourceContext: {anchor: projects/bench/composite-apps}\nmetadata: {name: ca}\nspec: {compositeAppVersion: v1}\n'
  printf -- '---\nversion: emco/v2\nresourceContext: {anchor: %s/composite-profiles}\nmetadata: {name: prof}\n' "$ca"
  printf -- '---\nversion: emco/v2\nresourceContext: {anchor: %s/deployment-intent-groups}\nmetadata: {name: dig}\n' "$ca"
  printf 'spec: {compositeProfile: prof, version: r1, logicalCloud: admin}\n'
  printf -- '---\nversion: emco/v2\nresourceContext: {anchor: %s/deployment-intent-groups/dig/intents}\nmetadata: {name: intent}\n' "$ca"
  printf 'spec: {intent: {genericPlacementIntent: gpi}}\n'
  printf -- '---\nversion: emco/v2\nresourceContext: {anchor: %s/deployment-intent-groups/dig/generic-placement-intents}\nmetadata: {name: gpi}\n' "$ca"
  for a in $(seq 0 $((apps - 1))); do
    printf -- '---\nversion: emco/v2\nresourceContext: {anchor: %s/apps}\nmetadata: {name: app%s}\nfile: %s\n' "$ca" "$a" "$chart"
    printf -- '---\nversion: emco/v2\nresourceContext: {anchor: %s/composite-profiles/prof/profiles}\nmetadata: {name: p%s}\n' "$ca" "$a"
    printf 'spec: {app: app%s}\nfile: %s\n' "$a" "$profiles/app$a"
    printf -- '---\nversion: emco/v2\nresourceContext: {anchor: %s/deployment-intent-groups/dig/generic-placement-intents/gpi/app-intents}\n' "$ca"
    printf 'metadata: {name: place%s}\nspec:\n  app: app%s\n  intent:\n    allOf:\n      - {clusterProvider: edge, clusterLabel: edge}\n' "$a" "$a"
  done
}

# split_batch DIR < DOCUMENTS
#   writes the documents on stdin to DIR/0001.yaml, DIR/0002.yaml, ... of at
#   most ~8 MB each, split between documents (`emco apply` reads a file of at
#   most 16 MiB; `emco apply -f DIR` applies them in order, in one transaction).
split_batch() {
  mkdir -p "$1"
  awk -v dir="$1" 'BEGIN { part = 1; file = sprintf("%s/%04d.yaml", dir, part) }
    $0 == "---" && size > 8000000 { close(file); part++; file = sprintf("%s/%04d.yaml", dir, part); size = 0; next }
    { print > file; size += length($0) + 1 }'
}
