#!/usr/bin/env bash
# Makes the benchmarks' git repository: libgit2's source tree as vendored
# by the `libgit2-sys` crate (a dependency, so it is in the cargo registry
# after a build), copied into DIR and committed once with a fixed identity
# and date, so every run indexes the same repository state. Prints the
# source directory it used.
#
#   bench/git-corpus.sh DIR
set -euo pipefail
REPO=${1:?usage: bench/git-corpus.sh DIR}
SRC=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/libgit2-sys-*/libgit2 2>/dev/null | sort | tail -1)
[ -n "$SRC" ] || { echo "error: no libgit2-sys sources in the cargo registry (run cargo build first)" >&2; exit 1; }
rm -rf "$REPO" && mkdir -p "$REPO" && cp -r "$SRC"/. "$REPO"/
cd "$REPO"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
  GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost \
  GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost \
  GIT_AUTHOR_DATE=2025-01-01T00:00:00Z GIT_COMMITTER_DATE=2025-01-01T00:00:00Z
git -c init.defaultBranch=main init -q
git add -A
git -c commit.gpgsign=false commit -q -m "libgit2 $(basename "$(dirname "$SRC")")"
echo "$SRC"
