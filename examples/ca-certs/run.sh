#!/usr/bin/env bash
# The ca-certs example end to end on simulated clusters:
#   examples/ca-certs/run.sh [EMCO]     (default: emco on PATH)
# Starts an issuing cluster and two edge clusters (cert-manager, Istio and
# KNCC preinstalled), makes a root CA with openssl and gives it to the
# issuing cluster's ClusterIssuer, then applies 01..04 with emco: the edge
# clusters' Secrets must chain to the root (kubectl reads them, openssl
# verifies); `emco delete -f` of 04 and 03 terminates (as emcoctl's delete
# of an instantiate anchor does) and the objects must be gone. Needs kubectl, jq and
# openssl. Exits non-zero on the first check that fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
emco="$(realpath "${1:-$(command -v emco)}")"
work="$(mktemp -d "${TMPDIR:-/tmp}/emco-ca-certs.XXXXXX")"
sim="$work/sim"
cleanup() {
  "$emco" sim stop --dir "$sim" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
say() { printf '== %s\n' "$*"; }

say "simulated clusters: issuer1, edge1, edge2"
"$emco" sim start --dir "$sim" --name issuer1 --name edge1 --name edge2 \
  --preinstall cert-manager --preinstall istio --preinstall kncc >"$work/sim.log" 2>&1 &
for _ in $(seq 100); do [ -f "$sim/kubeconfigs/edge2.yaml" ] && break; sleep 0.1; done
kc() { echo "$sim/kubeconfigs/$1.yaml"; }
kubectl --kubeconfig "$(kc issuer1)" get namespace cert-manager >/dev/null

say "root CA (openssl) in the issuing cluster's ClusterIssuer"
openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=example-root-ca" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -keyout "$work/root.key" -out "$work/root.crt" 2>/dev/null
kubectl --kubeconfig "$(kc issuer1)" -n cert-manager create secret tls root-ca \
  --cert "$work/root.crt" --key "$work/root.key" >/dev/null
kubectl --kubeconfig "$(kc issuer1)" apply -f "$here/root-issuer.yaml" >/dev/null

cat >"$work/values.yaml" <<VALUES
IssuerProvider: issuers
IssuingCluster: {Name: issuer1, KubeConfig: $(kc issuer1)}
EdgeProvider: edge
Edges:
  - {Name: edge1, KubeConfig: $(kc edge1)}
  - {Name: edge2, KubeConfig: $(kc edge2)}
Cert: mesh-ca
Issuer: root-issuer
VALUES
export EMCO_WORKSPACE="$work/ws"
"$emco" init "$work/ws" >/dev/null
for f in 01-clusters.yaml 02-cert.yaml 03-enrollment.yaml 04-distribution.yaml; do
  say "emco apply -f $f"
  (cd "$here" && "$emco" apply -f "$f" -v "$work/values.yaml")
done
"$emco" cert status edge/mesh-ca
say "the distribution's status through its anchor, as emcoctl reads it"
ready="$("$emco" get cluster-providers/edge/ca-certs/mesh-ca/distribution/status -o json | jq -r .readyStatus)"
[ "$ready" = Ready ] || { echo "distribution/status: readyStatus is '$ready', expected Ready" >&2; exit 1; }

for edge in edge1 edge2; do
  say "$edge: the distributed intermediate CA chains to the root"
  name="$(kubectl --kubeconfig "$(kc $edge)" -n cert-manager get secrets -o name | grep -- "-mesh-ca-edge-$edge-ca$")"
  kubectl --kubeconfig "$(kc $edge)" -n cert-manager get "$name" -o jsonpath='{.data.tls\.crt}' | base64 -d >"$work/$edge.chain"
  # The first certificate is the edge's intermediate; the rest of the chain is untrusted input.
  awk '/BEGIN CERT/{n++} n==1' "$work/$edge.chain" >"$work/$edge.crt"
  openssl verify -CAfile "$work/root.crt" -untrusted "$work/$edge.chain" "$work/$edge.crt"
  openssl x509 -in "$work/$edge.crt" -noout -ext basicConstraints | grep -q "CA:TRUE"
  kubectl --kubeconfig "$(kc $edge)" get clusterissuers.cert-manager.io -o name | grep -q -- "-mesh-ca-edge-$edge-issuer"
  kubectl --kubeconfig "$(kc $edge)" -n istio-system get configctrls.kncc.k8sappconfig.com.gitlab.com -o name | grep -q -- "-kncc"
done

for f in 04-distribution.yaml 03-enrollment.yaml; do
  say "emco delete -f $f (terminate)"
  (cd "$here" && "$emco" delete -f "$f" -v "$work/values.yaml")
done
for edge in edge1 edge2; do
  left="$(kubectl --kubeconfig "$(kc $edge)" -n cert-manager get secrets -o name | grep -c -- "-mesh-ca-" || true)"
  [ "$left" = 0 ] || { echo "$edge still has $left ca-certs secrets" >&2; exit 1; }
done
left="$(kubectl --kubeconfig "$(kc issuer1)" get certificaterequests.cert-manager.io -A -o name | wc -l)"
[ "$left" = 0 ] || { echo "issuer1 still has $left certificate requests" >&2; exit 1; }
(cd "$here" && "$emco" delete -f 02-cert.yaml -v "$work/values.yaml" && "$emco" delete -f 01-clusters.yaml -v "$work/values.yaml") >/dev/null
say "ok: enrolled, distributed, verified against the root and terminated"
