#!/usr/bin/env bash
# A throwaway PostgreSQL server for the test suites' store-postgresql runs
# (ctest's fixture "pg", tests/CMakeLists.txt) and the benchmarks.
#   pg-test-server.sh start DIR [PORT]  initdb + pg_ctl start, listening on
#                                 the Unix socket DIR/.s.PGSQL.PORT and, with
#                                 TLS only, on 127.0.0.1:PORT (a test CA in
#                                 DIR/tls/ca.crt signs its certificate for
#                                 localhost); prints the base URL. Without
#                                 PORT it picks one below the kernel's
#                                 ephemeral range and, when that port is
#                                 taken, tries others: callers then read the
#                                 port from the URL. Exit 0 even when
#                                 PostgreSQL is not installed (the suites
#                                 then skip, saying so).
#   pg-test-server.sh stop DIR    stops it and removes DIR.
# A server already running in DIR on PORT is shared: each start records its
# caller (the parent process: ctest, a benchmark's shell) in DIR/users and
# each stop removes its own, stopping the server when no live caller is
# left. Two ctest runs in one build tree thus no longer stop each other's
# server, and a server whose callers all died (an interrupted run) is
# replaced by a fresh one rather than reused with an earlier run's data.
# PostgreSQL refuses to run as root: as root the server runs as the user
# "nobody" (DIR is given to it); the clients connect as the database
# superuser "postgres" over the socket (trust authentication: only this
# machine's users can reach the socket, and the data is throwaway).
set -euo pipefail
cmd=${1:?start|stop}
dir=${2:?directory}
port=${3:-}
bindir=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}

# The callers in DIR/users that still run, less $1 (a PID or "") and this
# process (a caller's shell may exec this script as its last command).
live_users() {
  [ -f "$dir/users" ] || return 0
  while read -r pid; do
    if [ -n "$pid" ] && [ "$pid" != "$1" ] && [ "$pid" != "$$" ] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
  done <"$dir/users"
}

# One start or stop at a time per DIR (the lock lives beside it: DIR is
# removed and made again; the server must not inherit it).
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9

case "$cmd" in
start)
  if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
    echo "pg-test-server: PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin): the store-postgresql tests will skip" >&2
    exit 0
  fi
  if [ -n "$port" ] && [ -S "$dir/.s.PGSQL.$port" ] && as_owner "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    users=$(live_users "")
    if [ -n "$users" ]; then
      printf '%s\n%s\n' "$users" "$PPID" >"$dir/users"
      echo "postgresql:///postgres?host=$dir&port=$port&user=postgres"
      exit 0
    fi
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -s stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  chmod 0700 "$dir"
  if [ "$(id -u)" = 0 ]; then chown nobody "$dir"; fi
  as_owner "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    exit 1
  }
  # A CA and the server's certificate for localhost: TCP connections
  # must use TLS (hostssl), so sslmode=verify-full can be tested.
  mkdir -p "$dir/tls"
  (
    cd "$dir/tls"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=emco-test-ca -keyout ca.key -out ca.crt
    openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout server.key -out server.csr
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.crt
  ) >"$dir/tls.log" 2>&1 || { cat "$dir/tls.log" >&2; exit 1; }
  cp "$dir/tls/server.crt" "$dir/tls/server.key" "$dir/data/"
  chmod 0600 "$dir/data/server.key"
  if [ "$(id -u)" = 0 ]; then chown nobody "$dir/data/server.crt" "$dir/data/server.key"; fi
  printf 'local all all trust\nhostssl all all 127.0.0.1/32 trust\n' >"$dir/data/pg_hba.conf"
  # A port of our own choosing stays below the ephemeral range: a port in
  # it may be held by any outgoing connection (a benchmark that just made
  # thousands of them), and binding it then fails.
  ephemeral_low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  pick_port() { echo $((10000 + (RANDOM * 32768 + RANDOM) % (ephemeral_low - 10000))); }
  chosen=$port
  attempts=1
  if [ -z "$chosen" ]; then chosen=$(pick_port); attempts=20; fi
  for attempt in $(seq "$attempts"); do
    # Room for the suites running in parallel (each test is a few connections).
    if as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -s \
      -o "-c listen_addresses=127.0.0.1 -c port=$chosen -c ssl=on -c unix_socket_directories='$dir' \
          -c max_connections=300 -c fsync=off \
          -c synchronous_commit=off -c full_page_writes=off -c max_locks_per_transaction=256 \
          -c max_pred_locks_per_transaction=256" start 2>"$dir/pg_ctl.err" 9>&-; then
      break
    fi
    if [ "$attempt" = "$attempts" ] || ! grep -q "Address already in use" "$dir/server.log"; then
      cat "$dir/pg_ctl.err" "$dir/server.log" >&2
      exit 1
    fi
    echo "pg-test-server: port $chosen is taken, trying another" >&2
    : >"$dir/server.log"
    chosen=$(pick_port)
  done
  echo "$PPID" >"$dir/users"
  # The socket directory is the server's; clients of any user may connect.
  chmod 0755 "$dir"
  echo "postgresql:///postgres?host=$dir&port=$chosen&user=postgres"
  ;;
stop)
  users=$(live_users "$PPID")
  if [ -n "$users" ]; then
    echo "$users" >"$dir/users"
    exit 0
  fi
  if [ -d "$dir/data" ] && [ -n "$bindir" ]; then
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -s stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: pg-test-server.sh start DIR [PORT] | stop DIR" >&2
  exit 2
  ;;
esac
