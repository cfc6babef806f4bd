#!/usr/bin/env bash
# Regenerates xtask/sqlite/grammar.patch: the difference between the SQLite
# amalgamation sqlite-wasm-rs bundles and one generated from SQLite's
# canonical sources with the options in xtask/sqlite/grammar-omits (its parser,
# keyword table and the code those options remove). Run it after upgrading
# sqlite-wasm-rs: set SQLITE_TARBALL_URL/SHA256 to the SQLite release it
# bundles (Debian's orig tarball of that release is the canonical source
# tree). Needs curl, xz, make and a C compiler; takes about a minute.
set -euo pipefail
cd "$(dirname "$0")/../.."
SQLITE_TARBALL_URL=${SQLITE_TARBALL_URL:-http://deb.debian.org/debian/pool/main/s/sqlite3/sqlite3_3.53.4.orig.tar.xz}
SQLITE_TARBALL_SHA256=${SQLITE_TARBALL_SHA256:-05366adc8ee80c6b1faa71285b49d133c2121238ca58934b077fdeb95934abd4}

crate=$(cargo metadata --format-version 1 --filter-platform wasm32-unknown-unknown |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const p=JSON.parse(s).packages.find(p=>p.name==="sqlite-wasm-rs");console.log(require("path").dirname(p.manifest_path))})')
work=target/sqlite-src
rm -rf "$work" && mkdir -p "$work"
curl -fsSL "$SQLITE_TARBALL_URL" -o "$work/src.tar.xz"
echo "$SQLITE_TARBALL_SHA256  $work/src.tar.xz" | sha256sum -c --quiet
tar -xf "$work/src.tar.xz" -C "$work"
top=$(cd "$work"/sqlite3-* && pwd)
opts=$(grep -v '^#' xtask/sqlite/grammar-omits | sed '/^$/d; s/^/-D/' | tr '\n' ' ')
mkdir -p "$work/build"
(cd "$work/build" && "$top/configure" --disable-tcl >/dev/null && make sqlite3.c OPTS="$opts" >/dev/null)
want=$(grep -m1 '#define SQLITE_SOURCE_ID' "$crate/sqlite3/sqlite3.h")
got=$(grep -m1 '#define SQLITE_SOURCE_ID' "$work/build/sqlite3.h")
[ "$want" = "$got" ] || { echo "error: the tarball is not the SQLite sqlite-wasm-rs bundles ($got, not $want)" >&2; exit 1; }
mkdir -p "$work/a" "$work/b"
cp "$crate/sqlite3/sqlite3.c" "$work/a/"
cp "$work/build/sqlite3.c" "$work/b/"
{
  echo "SQLite $(sed -n 's/^#define SQLITE_VERSION  *"\(.*\)"/\1/p' "$crate/sqlite3/sqlite3.h") amalgamation (source id $(echo "$want" | sed 's/.*"\(.*\)"/\1/')) regenerated with:"
  echo "  $opts"
  echo "by xtask/sqlite/make-grammar-patch.sh; do not edit."
  (cd "$work" && diff -u --label a/sqlite3.c --label b/sqlite3.c a/sqlite3.c b/sqlite3.c) || true
} >xtask/sqlite/grammar.patch
echo "wrote xtask/sqlite/grammar.patch ($(wc -c <xtask/sqlite/grammar.patch) bytes)"
