#!/usr/bin/env bash
# The module boundaries a compiler does not enforce, checked on the sources.
#   1. Only core/store and core/appcontext's row files (persistence, header,
#      status and queue rows, which keep their own tables) see the database:
#      core/store/database.hpp and the backends' headers (core/store/<backend>/)
#      are included nowhere else in emco's code (white-box tests may include
#      database.hpp, not a backend's header).
#   2. A database engine's headers are included only in its backend's folder,
#      tests and benchmarks included: sqlite3.h and SQLiteCpp in
#      core/store/sqlite/, libpq and libpqxx in core/store/postgresql/.
#   3. core/ depends on nothing above it: no include of plugins/, cli/ or sim/.
#   4. Core headers stay light: none includes CLI11, nlohmann/json.hpp
#      (json_fwd.hpp is fine), curl, git2 or a database engine's header.
# Prints every offence as file:line: text and exits 1 when there is one.
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
status=0
offend() {  # rule, grep -n output lines
  local rule=$1 line
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    echo "$line: $rule" >&2
    status=1
  done
}
sources() { find "$@" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) 2>/dev/null | sort; }
inc='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]'

for f in $(sources core plugins cli sim tests bench); do
  case $f in
  core/store/*) ;;
  core/appcontext/persistence.cpp | core/appcontext/*_rows.cpp | core/appcontext/rows.cpp | tests/*)
    offend "a database backend is reached through core/store/database.hpp, not its own headers" \
      < <(grep -nE "$inc"'core/store/[a-z0-9_]+/' "$f" | sed "s|^|$f:|") ;;
  *) offend "the database is private to core/store and core/appcontext's row files" \
       < <(grep -nE "$inc"'core/store/(database\.hpp|[a-z0-9_]+/)' "$f" | sed "s|^|$f:|") ;;
  esac
done
engine_headers() {  # backend folder, include pattern, engine name
  local f
  for f in $(sources core plugins cli sim tests bench); do
    case $f in "$1"/*) continue ;; esac
    offend "$3's headers belong to $1/ (the $3 backend)" < <(grep -nE "$inc$2" "$f" | sed "s|^|$f:|")
  done
}
engine_headers core/store/sqlite '(sqlite3\.h|SQLiteCpp/)' SQLite
engine_headers core/store/postgresql '(libpq-fe\.h|libpq/|pqxx/)' PostgreSQL
for f in $(sources core); do
  offend "core must not depend on plugins/, cli/ or sim/" \
    < <(grep -nE "$inc(plugins|cli|sim)/" "$f" | sed "s|^|$f:|")
done
for f in $(find core -type f -name '*.hpp' | sort); do
  offend "a core header must not include a heavy header (use json_fwd.hpp, keep it in the .cpp)" \
    < <(grep -nE "$inc(CLI/|CLI11|nlohmann/json\.hpp|curl/|git2|sqlite3\.h|SQLiteCpp/|libpq|postgresql/)" "$f" | sed "s|^|$f:|")
done
[ $status -eq 0 ] && echo "module boundaries hold"
exit $status
