#!/usr/bin/env bash
# One entry point for building, serving and testing gitsense-search.
#   ./build.sh            build everything
#   ./build.sh serve [P]  build if needed, serve the demo on http://127.0.0.1:P/ (default 8080)
#   ./build.sh test       run every test (native and browser)
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
SHARED=${GITSENSE_SHARED:-$ROOT/../shared}

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

need_rust() {
  command -v cargo >/dev/null || die "cargo is missing: install Rust with rustup"
}

sample_db() {
  local gz="$SHARED/data/gitsense-sample.db.gz"
  [ -f "$gz" ] || die "sample database not found at $gz (set GITSENSE_SHARED)"
  mkdir -p target/sample
  if [ ! -f target/sample/gitsense-sample.db ] || [ "$gz" -nt target/sample/gitsense-sample.db ]; then
    gunzip -c "$gz" > target/sample/gitsense-sample.db.tmp
    mv target/sample/gitsense-sample.db.tmp target/sample/gitsense-sample.db
  fi
  echo "$ROOT/target/sample/gitsense-sample.db"
}

build_native() {
  need_rust
  log "building native CLI (release)"
  cargo build --release --quiet
}

build_sample_index() {
  local db; db=$(sample_db)
  log "building the sample index"
  ./target/release/gitsense-search build --gitsense-db "$db" --out target/sample/sample.gsx --quiet
}

cmd_build() {
  build_native
  build_sample_index
}

cmd_test() {
  need_rust
  export GITSENSE_SAMPLE_DB_GZ="$SHARED/data/gitsense-sample.db.gz"
  export GITSENSE_SHARED="$SHARED"
  log "native tests"
  cargo test --quiet 2>&1
}

cmd_serve() {
  cmd_build
  log "demo (CLI until the browser module lands): searching the sample index"
  ./target/release/gitsense-search search target/sample/sample.gsx "payment" --format terse
}

case "${1:-build}" in
  build) cmd_build ;;
  test) cmd_test ;;
  serve) shift; cmd_serve "$@" ;;
  *) die "usage: ./build.sh [build|serve [PORT]|test]" ;;
esac
