#!/usr/bin/env bash
# The dashboard of `emco serve` in a real browser (issue 25 item 4): Debian's
# headless Chromium driven by puppeteer-core (tests/browser/dashboard.cjs)
# against `emco serve` over a workspace with three simulated clusters (the
# quickstart). Pages render, the DIG matrix shows what `emco dig status`
# prints, progress moves during an instantiate (the simulator answers slowly),
# actions work with --allow-actions and are refused without, and beyond
# loopback nothing but the dashboard's files is served without the token.
# Screenshots of every page go to BUILD/browser-test/screenshots.
#
# usage: scripts/browser-test.sh BUILD        (KEEP=1 keeps the work directory)
# Installs what it needs: chromium (apt, as root or with sudo) and
# puppeteer-core (npm, into BUILD/browser-test, outside the sources).
set -euo pipefail
BUILD=$(realpath "${1:?usage: scripts/browser-test.sh BUILD}")
SRC=$(cd "$(dirname "$0")/.." && pwd)
EMCO="$BUILD/emco"
[ -x "$EMCO" ] || { echo "browser-test: $EMCO is not built" >&2; exit 1; }

if ! command -v chromium >/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
CHROME=/usr/lib/chromium/chromium
[ -x "$CHROME" ] || CHROME=$(command -v chromium)
TOOLS="$BUILD/browser-test"
mkdir -p "$TOOLS"
if [ ! -d "$TOOLS/node_modules/puppeteer-core" ]; then
  [ -f "$TOOLS/package.json" ] || echo '{"private": true}' > "$TOOLS/package.json"
  (cd "$TOOLS" && npm install --no-audit --no-fund --silent puppeteer-core@25)
fi
SHOTS="$TOOLS/screenshots"
rm -rf "$SHOTS"
mkdir -p "$SHOTS"

work=$(mktemp -d /tmp/emco-browser.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  "$EMCO" sim stop --dir "$work/sim" >/dev/null 2>&1 || true
  if [ "${KEEP:-0}" = 1 ]; then echo "browser-test: work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export EMCO_WORKSPACE="$work/ws" EMCO_AUTO_RESUME=0

"$EMCO" sim start --clusters 3 --name edge1 --name edge2 --name edge3 --dir "$work/sim" --ready-delay-ms 200 \
  > "$work/sim.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -f "$work/sim/kubeconfigs/edge3.yaml" ] && [ -f "$work/sim/sim.pid" ] && break; sleep 0.1; done
cp -r "$SRC/examples/quickstart" "$work/quickstart"
cd "$work/quickstart"
sed -i '/^Clusters:/d' values.yaml
{ echo "Clusters:"; for i in 1 2 3; do echo "  - {Name: edge$i, KubeConfig: $work/sim/kubeconfigs/edge$i.yaml}"; done; } >> values.yaml
"$EMCO" init "$work/ws" >/dev/null
for f in 01-clusters.yaml 02-project.yaml 03-app.yaml; do "$EMCO" apply -f "$f" -v values.yaml >/dev/null; done

# serve NAME FLAGS...: starts `emco serve` (in this shell, so cleanup stops it);
# url NAME prints its URL once it listens.
serve() {
  local name=$1; shift
  "$EMCO" serve "$@" > "$work/$name.log" 2>&1 &
  pids+=($!)
}
url() {
  for _ in $(seq 100); do
    grep -q '^dashboard on ' "$work/$1.log" 2>/dev/null && break
    sleep 0.1
  done
  sed -n 's/^dashboard on \([^ ]*\)\/ .*/\1/p' "$work/$1.log" | head -1
}
echo "browser-test-token" > "$work/token"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/server.key" -out "$work/server.crt" \
  -days 1 -subj /CN=emco-serve -addext subjectAltName=IP:127.0.0.2 >/dev/null 2>&1
serve rw --listen 127.0.0.1:0 --allow-actions
serve ro --listen 127.0.0.1:0
serve remote --listen 127.0.0.2:0 --token-file "$work/token" --tls-cert "$work/server.crt" --tls-key "$work/server.key"
RW=$(url rw) RO=$(url ro) REMOTE=$(url remote)
[ -n "$RW" ] && [ -n "$RO" ] && [ -n "$REMOTE" ] || { cat "$work"/*.log >&2; exit 1; }

status=0
EMCO="$EMCO" SIM="$work/sim" CHROME="$CHROME" SHOTS="$SHOTS" RW="$RW" RO="$RO" REMOTE="$REMOTE" TOKEN=browser-test-token \
  NODE_PATH="$TOOLS/node_modules" node "$SRC/tests/browser/dashboard.cjs" || status=$?
if [ $status != 0 ]; then
  echo "browser-test: FAILED; the servers' logs:" >&2
  tail -n 20 "$work"/rw.log "$work"/ro.log "$work"/remote.log >&2
fi
echo "browser-test: screenshots in $SHOTS"
exit $status
