#!/usr/bin/env bash
# The git CLI side of the gitops benchmark: write the operation's files into a
# clone, then `git add -A`, `git commit`, `git push`.
# usage: git_cli.sh STAGING_DIR CLONE_DIR MESSAGE
set -euo pipefail
staging=$1 clone=$2 message=$3
cp -R "$staging/." "$clone/"
cd "$clone"
git add -A
git commit -q -m "$message"
git push -q origin HEAD:main
