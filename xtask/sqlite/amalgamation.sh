#!/usr/bin/env bash
# Writes the SQLite amalgamation the browser module compiles and prints its
# directory: the SQLite release sqlite-wasm-rs bundles, regenerated from
# SQLite's canonical sources with the options in xtask/sqlite/grammar-omits
# (SQLite generates its parser and keyword table from them, so leaving out
# SQL features takes a new amalgamation, not just compiler flags).
# Cached in target/sqlite-grammar/, keyed by the bundled SQLite's source id,
# the options and the source tarball: a second run only compares the key.
# Needs curl, xz, make, clang and node (./build.sh checks them).
# After upgrading sqlite-wasm-rs, set SQLITE_TARBALL_URL/SHA256 below to the
# release it bundles (Debian's orig tarball of that release is the canonical
# source tree); the source id check below refuses any other release.
set -euo pipefail
cd "$(dirname "$0")/../.."
SQLITE_TARBALL_URL=${SQLITE_TARBALL_URL:-http://deb.debian.org/debian/pool/main/s/sqlite3/sqlite3_3.53.4.orig.tar.xz}
SQLITE_TARBALL_SHA256=${SQLITE_TARBALL_SHA256:-05366adc8ee80c6b1faa71285b49d133c2121238ca58934b077fdeb95934abd4}
out=target/sqlite-grammar
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

crate=$(cargo metadata --format-version 1 --filter-platform wasm32-unknown-unknown |
  node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>{const p=JSON.parse(s).packages.find((p)=>p.name==="sqlite-wasm-rs");console.log(p?require("path").dirname(p.manifest_path):"")})')
[ -n "$crate" ] || die "cargo metadata does not list sqlite-wasm-rs"
want=$(grep -m1 '^#define SQLITE_SOURCE_ID' "$crate/sqlite3/sqlite3.h")
opts=$(grep -v '^#' xtask/sqlite/grammar-omits | sed '/^$/d; s/^/-D/' | tr '\n' ' ')
key="$want|$opts|$SQLITE_TARBALL_SHA256"
if [ -f "$out/key" ] && [ "$(cat "$out/key")" = "$key" ] && [ -f "$out/sqlite3.c" ]; then
  echo "$PWD/$out"
  exit 0
fi

work=target/sqlite-src
mkdir -p "$work"
tarball=$work/${SQLITE_TARBALL_URL##*/}
if [ ! -f "$tarball" ] || ! echo "$SQLITE_TARBALL_SHA256  $tarball" | sha256sum -c --quiet >/dev/null 2>&1; then
  echo "downloading $SQLITE_TARBALL_URL" >&2
  curl -fsSL "$SQLITE_TARBALL_URL" -o "$tarball.tmp" || die "downloading $SQLITE_TARBALL_URL failed"
  echo "$SQLITE_TARBALL_SHA256  $tarball.tmp" | sha256sum -c --quiet ||
    die "$SQLITE_TARBALL_URL does not have the sha256 this script expects"
  mv "$tarball.tmp" "$tarball"
fi
rm -rf "$work/tree" "$work/build" && mkdir -p "$work/tree" "$work/build"
tar -xf "$tarball" -C "$work/tree"
top=$(cd "$work"/tree/sqlite3-* && pwd)
echo "generating the SQLite amalgamation with $opts" >&2
(cd "$work/build" && CC=clang CC_FOR_BUILD=clang "$top/configure" --disable-tcl >configure.log 2>&1 &&
  make sqlite3.c OPTS="$opts" >make.log 2>&1) ||
  die "generating the SQLite amalgamation failed (logs in $work/build/configure.log and make.log)"
got=$(grep -m1 '^#define SQLITE_SOURCE_ID' "$work/build/sqlite3.h")
[ "$want" = "$got" ] ||
  die "$SQLITE_TARBALL_URL is not the SQLite sqlite-wasm-rs bundles ($got, not $want): set SQLITE_TARBALL_URL/SHA256 in $0"

# The headers are the bundled ones (the same release); only sqlite3.c
# differs. A file whose bytes did not change keeps its time stamp, so cargo
# does not compile SQLite again for nothing.
mkdir -p "$out"
rm -f "$out/key"
cp_changed() { cmp -s "$1" "$2" || { cp "$1" "$2.tmp" && mv "$2.tmp" "$2"; }; }
cp_changed "$work/build/sqlite3.c" "$out/sqlite3.c"
cp_changed "$crate/sqlite3/sqlite3.h" "$out/sqlite3.h"
cp_changed "$crate/sqlite3/sqlite3ext.h" "$out/sqlite3ext.h"
printf '%s' "$key" >"$out/key"
rm -rf "$work/tree" "$work/build"
echo "$PWD/$out"
