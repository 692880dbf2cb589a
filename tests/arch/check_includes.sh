#!/usr/bin/env bash
# The module boundaries a compiler does not enforce, checked on the sources
# (emco's code, not tests: white-box tests may open the store's handle).
#   1. Only core/store and core/appcontext's row files (persistence, header,
#      status and queue rows, which keep their own tables) see the database:
#      SQLiteCpp headers and store_impl.hpp are included nowhere else.
#   2. core/ depends on nothing above it: no include of plugins/, cli/ or sim/.
#   3. Core headers stay light: none includes CLI11, nlohmann/json.hpp
#      (json_fwd.hpp is fine), curl, git2, SQLiteCpp or libpq, except the
#      store's private store_impl.hpp.
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

for f in $(sources core plugins cli sim); do
  case $f in
  core/store/* | core/appcontext/persistence.cpp | core/appcontext/*_rows.cpp | core/appcontext/rows.cpp) ;;
  *) offend "the database handle is private to core/store and core/appcontext's row files" \
       < <(grep -nE "$inc(SQLiteCpp/|core/store/store_impl\.hpp|core/store/sqlite/)" "$f" | sed "s|^|$f:|") ;;
  esac
done
for f in $(sources core); do
  offend "core must not depend on plugins/, cli/ or sim/" \
    < <(grep -nE "$inc(plugins|cli|sim)/" "$f" | sed "s|^|$f:|")
done
for f in $(find core -type f -name '*.hpp' | sort); do
  [ "$f" = core/store/store_impl.hpp ] && continue
  offend "a core header must not include a heavy header (use json_fwd.hpp, keep it in the .cpp)" \
    < <(grep -nE "$inc(CLI/|CLI11|nlohmann/json\.hpp|curl/|git2|SQLiteCpp/|libpq|postgresql/)" "$f" | sed "s|^|$f:|")
done
[ $status -eq 0 ] && echo "module boundaries hold"
exit $status
