#!/usr/bin/env bash
# End-to-end suites: build and start the real forkgraph server on a free loopback port with a
# fresh database, and a second one in trusted-documents mode, run every e2e/*.test.mjs with
# node's test runner against them, stop the servers.
# Node packages come from package-lock.json (npm ci). relay.test.mjs compiles its Relay app against
# the running server's introspected schema first (relay/compile.mjs; README.md).
set -euo pipefail
cd "$(dirname "$0")"
root="$(cd .. && pwd)"
tmp="$(mktemp -d)"
server_pid=""
trusted_pid=""
recorder_pids=()
stop_recorders() {
  # SIGTERM makes a recorder write its file; wait so the file is complete when run.sh exits.
  for pid in "${recorder_pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  recorder_pids=()
}
cleanup() {
  stop_recorders
  for pid in "$server_pid" "$trusted_pid"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" && wait "$pid" 2>/dev/null || true
    fi
  done
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

# make test builds the server once for its three shell suites and passes it as FORKGRAPH_BIN;
# run alone, the script builds its own.
bin="${FORKGRAPH_BIN:-$tmp/forkgraph}"
if [ -z "${FORKGRAPH_BIN:-}" ]; then (cd "$root" && go build -o "$bin" .); fi
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
# wait_healthy URL PID LOG: poll /healthz until the server answers (or exits).
wait_healthy() {
  for _ in $(seq 1 100); do
    if curl -fsS "$1/healthz" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$2" 2>/dev/null; then cat "$3"; echo "e2e: server exited" >&2; exit 1; fi
    sleep 0.1
  done
  curl -fsS "$1/healthz" >/dev/null || { cat "$3"; echo "e2e: server not healthy" >&2; exit 1; }
}

port="$(free_port)"
# -sim-latency is each simulated provider step's time: the fork flows follow an operation after
# the fork's answer and must see it move, so a step must outlast the client's turn-around on a
# loaded machine (50 ms did not, once, when make test ran its suites beside the Go suite at a
# load of 14: the follow saw only COMMITTED).
"$bin" -addr "127.0.0.1:$port" -db "$tmp/db" -sim-latency 250ms >"$tmp/server.log" 2>&1 &
server_pid=$!
base="http://127.0.0.1:$port"
wait_healthy "$base" "$server_pid" "$tmp/server.log"

# A second server that runs only the documents of trusted-documents.json (trusted.test.mjs).
trusted_port="$(free_port)"
"$bin" -addr "127.0.0.1:$trusted_port" -db "$tmp/trusted-db" -no-seed \
  -trusted-documents "$PWD/trusted-documents.json" >"$tmp/trusted.log" 2>&1 &
trusted_pid=$!
trusted="http://127.0.0.1:$trusted_port"
wait_healthy "$trusted" "$trusted_pid" "$tmp/trusted.log"

# FORKGRAPH_E2E_RECORD=DIR puts wire-record.mjs in front of both servers: DIR/main.txt and
# DIR/trusted.txt then hold every exchange, normalized (scripts/e2e-wire-diff.sh compares two runs).
if [ -n "${FORKGRAPH_E2E_RECORD:-}" ]; then
  mkdir -p "$FORKGRAPH_E2E_RECORD"
  # record NAME URL: start a recorder in front of URL, print the recorder's URL.
  record() {
    local port; port="$(free_port)"
    node wire-record.mjs "$port" "$2" "$FORKGRAPH_E2E_RECORD/$1.txt" >"$tmp/record-$1.log" 2>&1 &
    recorder_pids+=($!)
    for _ in $(seq 1 100); do grep -q listening "$tmp/record-$1.log" 2>/dev/null && break; sleep 0.05; done
    record_url="http://127.0.0.1:$port"
  }
  record main "$base"; base="$record_url"
  record trusted "$trusted"; trusted="$record_url"
fi

status=0
FORKGRAPH_URL="$base" FORKGRAPH_TRUSTED_URL="$trusted" node --test --test-concurrency=1 ./*.test.mjs || status=$?
if [ "$status" -ne 0 ]; then
  echo "--- server log (last 50 lines) ---"; tail -50 "$tmp/server.log"
  echo "--- trusted-documents server log (last 20 lines) ---"; tail -20 "$tmp/trusted.log"
fi
stop_recorders
exit "$status"
