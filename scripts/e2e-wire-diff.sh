#!/usr/bin/env bash
# e2e-wire-diff.sh [BASE [HEAD]]: run the e2e suites with the wire recorder (e2e/wire-record.mjs)
# against the server built from BASE (a git revision, default main) and the one built from HEAD (a
# revision, default the working tree), and diff the two recordings. No output and exit 0 means every HTTP body and websocket frame the suites saw
# was byte-identical (after the recorder's normalization of per-run values). The harness of the
# working tree (run.sh, wire-record.mjs, the suites) is used for both, so BASE need not have it.
# KEEP=DIR keeps both recordings in DIR/base and DIR/head.
set -euo pipefail
# Each side's run.sh must build its own revision's server, not a FORKGRAPH_BIN from the caller.
unset FORKGRAPH_BIN
root="$(cd "$(dirname "$0")/.." && pwd)"
base_rev="${1:-main}"
head_rev="${2:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
out="${KEEP:-$work/out}"
mkdir -p "$out"

# The suites must be installed once in the working tree (run.sh does it); the base copy links them.
(cd "$root/e2e" && if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error; fi)

# tree REV DIR: REV's sources in DIR with the working tree's e2e harness.
tree() {
  mkdir -p "$2/e2e"
  git -C "$root" archive "$1" | tar -x -C "$2" --exclude=e2e
  (cd "$root/e2e" && tar -c --exclude=node_modules --exclude=relay/__generated__ --exclude=relay/schema .) | tar -x -C "$2/e2e"
  ln -s "$root/e2e/node_modules" "$2/e2e/node_modules"
}
tree "$base_rev" "$work/base"
head_dir="$root"
if [ -n "$head_rev" ]; then tree "$head_rev" "$work/head"; head_dir="$work/head"; fi

echo "e2e-wire-diff: recording $base_rev" >&2
FORKGRAPH_E2E_RECORD="$out/base" bash "$work/base/e2e/run.sh" >"$out/base.log" 2>&1 || { tail -30 "$out/base.log"; exit 1; }
echo "e2e-wire-diff: recording ${head_rev:-the working tree}" >&2
FORKGRAPH_E2E_RECORD="$out/head" bash "$head_dir/e2e/run.sh" >"$out/head.log" 2>&1 || { tail -30 "$out/head.log"; exit 1; }
diff -ru "$out/base" "$out/head"
