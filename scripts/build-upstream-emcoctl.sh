#!/usr/bin/env bash
# Builds upstream EMCO's emcoctl (src/tools/emcoctl of an upstream checkout)
# with Debian 12's Go packages only: no module proxy, GOPATH mode, Debian's
# libraries under /usr/share/gocode (their versions differ from emcoctl's
# go.mod: resty 2.6 for 2.7, cobra 1.6 for 1.3, grpc 1.33 for 1.49 — the
# parts emcoctl uses build and run). The one package emcoctl takes from
# EMCO's orchestrator module, statusnotify (generated gRPC code, for `watch`),
# is copied from the same checkout. Then `scripts/flows.sh BUILD/emco --http`
# with EMCOCTL=OUT runs the upstream flows with upstream's own client.
#
# usage: scripts/build-upstream-emcoctl.sh UPSTREAM_CHECKOUT OUT
# needs: apt-get install golang-go golang-github-go-resty-resty-dev
#   golang-github-google-uuid-dev golang-github-mitchellh-go-homedir-dev
#   golang-github-mitchellh-mapstructure-dev golang-github-pkg-errors-dev
#   golang-github-spf13-cobra-dev golang-github-spf13-viper-dev
#   golang-google-grpc-dev golang-google-protobuf-dev golang-gopkg-yaml.v3-dev
set -euo pipefail
SRC=$(realpath "${1:?usage: scripts/build-upstream-emcoctl.sh UPSTREAM_CHECKOUT OUT}")
OUT=$(realpath -m "${2:?usage: scripts/build-upstream-emcoctl.sh UPSTREAM_CHECKOUT OUT}")
[ -d "$SRC/src/tools/emcoctl/cmd" ] || { echo "error: $SRC has no src/tools/emcoctl" >&2; exit 1; }
GP=$(mktemp -d /tmp/emcoctl-gopath.XXXXXX)
trap 'rm -rf "$GP"' EXIT
mkdir -p "$GP/src/tools" "$GP/src/github.com/go-resty/resty" \
  "$GP/src/gitlab.com/project-emco/core/emco-base/src/orchestrator/pkg/grpc"
cp -r "$SRC/src/tools/emcoctl" "$GP/src/tools/emcoctl"
rm -f "$GP/src/tools/emcoctl/go.mod" "$GP/src/tools/emcoctl/go.sum"
cp -r "$SRC/src/orchestrator/pkg/grpc/statusnotify" \
  "$GP/src/gitlab.com/project-emco/core/emco-base/src/orchestrator/pkg/grpc/statusnotify"
# Debian installs resty v2 without the module's /v2 path element.
ln -s /usr/share/gocode/src/github.com/go-resty/resty "$GP/src/github.com/go-resty/resty/v2"
cd "$GP/src/tools/emcoctl"
GO111MODULE=off GOPATH=$GP:/usr/share/gocode GOPROXY=off GOCACHE=$GP/cache go build -o "$OUT" .
echo "$OUT"
