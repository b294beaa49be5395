#!/usr/bin/env bash
# Browser tests of the playground and the session-graph explorer, in real headless Chromium
# (Debian's chromium package, driven by playwright-core from npm; no browser is downloaded), against
# the real forkgraph server built from this checkout. Every request the page makes outside
# 127.0.0.1 is aborted and fails the run. Screenshots go to web/playground/artifacts/.
#
# Exit status: 0 all passed; 1 a test or the server failed; 3 a needed tool is missing (node, npm,
# chromium, or the npm packages could not be installed), so the caller decides whether that fails.
#
# Environment: CHROMIUM (default /usr/bin/chromium), GO (default go).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
GO=${GO:-go}
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

missing() {
  printf '\n*** playground browser tests cannot run: %s\n\n' "$1" >&2
  exit 3
}

command -v node >/dev/null 2>&1 || missing "node is not installed (apt-get install -y nodejs npm)"
command -v npm >/dev/null 2>&1 || missing "npm is not installed (apt-get install -y npm)"
[ -x "$CHROMIUM" ] || missing "no Chromium at $CHROMIUM (apt-get install -y chromium)"

# Install the locked npm packages unless node_modules already matches the lockfile.
if ! cmp -s "$here/package-lock.json" "$here/node_modules/.forkgraph-lock" 2>/dev/null; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) ||
    missing "npm ci failed (is the npm registry reachable?)"
  cp "$here/package-lock.json" "$here/node_modules/.forkgraph-lock"
fi

tmp=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "building the server"
(cd "$repo" && "$GO" build -o "$tmp/forkgraph" .) || { echo "FAIL: go build" >&2; exit 1; }

port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
base="http://127.0.0.1:$port"
"$tmp/forkgraph" -addr "127.0.0.1:$port" -db "$tmp/fg.db" -sim-latency 150ms >"$tmp/server.log" 2>&1 &
server_pid=$!

# Poll /healthz: the server is an external process, so a bounded poll is the way to await it.
ready=""
for _ in $(seq 1 150); do
  if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
  if node -e "fetch('$base/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"; then ready=1; break; fi
  sleep 0.2
done
if [ -z "$ready" ]; then
  echo "FAIL: the server did not become healthy at $base; its log:" >&2
  cat "$tmp/server.log" >&2
  exit 1
fi
echo "server ready at $base"

mkdir -p "$here/artifacts"
(cd "$here" && FORKGRAPH_URL="$base" node --test --test-concurrency=1 --test-timeout=120000 test/*.test.mjs)
rc=$?
if [ $rc -ne 0 ]; then
  echo "--- server log (last 60 lines) ---" >&2
  tail -n 60 "$tmp/server.log" >&2
  exit 1
fi
echo "screenshots: $here/artifacts/"
exit 0
