#!/usr/bin/env bash
# check_includes.sh finds what it is for: a tree with one offence per
# database rule makes it fail and name each one as file:line, and the same
# includes where they belong pass.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/core/{store/sqlite,sync,appcontext} "$tree"/tests/store "$tree"/bench/x
put() { printf '%s\n' "${@:2}" > "$tree/$1"; }
# Allowed.
put core/store/sqlite/sqlite_database.cpp '#include <sqlite3.h>'
put core/store/database.cpp '#include "core/store/sqlite/sqlite_database.hpp"'
put core/appcontext/status_rows.cpp '#include "core/store/database.hpp"'
put tests/store/database_test.cpp '#include "core/store/database.hpp"'
if ! bash "$here/check_includes.sh" "$tree" >/dev/null 2>&1; then
  echo "check_includes_test: a clean tree was refused" >&2
  bash "$here/check_includes.sh" "$tree"
  exit 1
fi
# Offences.
put core/sync/queue.cpp '// x' '#include "core/store/database.hpp"'
put core/appcontext/value.cpp '#include "core/store/database.hpp"'
put tests/store/white_box.cpp '#include "core/store/sqlite/sqlite_database.hpp"'
put bench/x/x.cpp '#include <SQLiteCpp/SQLiteCpp.h>'
put core/store/store.cpp '#include <libpq-fe.h>'
put core/store/store.hpp '#include <sqlite3.h>'
out=$(bash "$here/check_includes.sh" "$tree" 2>&1)
rc=$?
status=0
[ $rc -eq 1 ] || { echo "check_includes_test: exit code $rc, expected 1" >&2; status=1; }
for want in 'core/sync/queue.cpp:2:' 'core/appcontext/value.cpp:1:' 'tests/store/white_box.cpp:1:' \
            'bench/x/x.cpp:1:' 'core/store/store.cpp:1:' 'core/store/store.hpp:1:'; do
  grep -qF "$want" <<<"$out" || { echo "check_includes_test: no offence reported at $want" >&2; status=1; }
done
[ $status -eq 0 ] || echo "$out" >&2
exit $status
