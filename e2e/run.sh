#!/usr/bin/env bash
# End-to-end suites: build and start the real forkgraph server on a free loopback port with a
# fresh database, run every e2e/*.test.mjs with node's test runner against it, stop the server.
# Node packages come from package-lock.json (npm ci).
set -euo pipefail
cd "$(dirname "$0")"
root="$(cd .. && pwd)"
tmp="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" && wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

for tool in node npm curl go; do
  command -v "$tool" >/dev/null 2>&1 || { echo "e2e: $tool is not installed" >&2; exit 3; }
done
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error ||
    { echo "e2e: npm ci failed (is the npm registry reachable?)" >&2; exit 3; }
fi

(cd "$root" && go build -o "$tmp/forkgraph" .)
port="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
"$tmp/forkgraph" -addr "127.0.0.1:$port" -db "$tmp/db" -sim-latency 50ms >"$tmp/server.log" 2>&1 &
server_pid=$!

base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  if curl -fsS "$base/healthz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$tmp/server.log"; echo "e2e: server exited" >&2; exit 1; fi
  sleep 0.1
done
curl -fsS "$base/healthz" >/dev/null || { cat "$tmp/server.log"; echo "e2e: server not healthy" >&2; exit 1; }

status=0
FORKGRAPH_URL="$base" node --test --test-concurrency=1 ./*.test.mjs || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- server log (last 50 lines) ---"; tail -50 "$tmp/server.log"
fi
exit "$status"
