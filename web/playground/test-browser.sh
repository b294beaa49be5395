#!/usr/bin/env bash
# Browser tests of the playground and the session-graph explorer, in real headless Chromium
# (Debian's chromium package, driven by playwright-core from npm; no browser is downloaded), against
# the real forkgraph server built from this checkout. Every request the page makes outside
# 127.0.0.1 is aborted and fails the run. Screenshots go to web/playground/artifacts/.
#
# Exit status: 0 all passed; 1 a test or the server failed; 3 a needed tool is missing (node, npm,
# chromium, or the npm packages could not be installed), so the caller decides whether that fails.
#
# Environment: CHROMIUM (default /usr/bin/chromium), GO (default go), BROWSER_TESTS (the test
# files to run, relative to web/playground; default test/*.test.mjs, e.g.
# BROWSER_TESTS="test/explorer.test.mjs test/explorer-transcript.test.mjs").
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
# Debian's chromium is installed when this runs as root with apt (as CI does); elsewhere a missing
# browser is reported and the suite skipped.
if [ ! -x "$CHROMIUM" ] && [ "$CHROMIUM" = /usr/bin/chromium ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the browser tests" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } ||
    missing "apt-get could not install chromium"
fi
[ -x "$CHROMIUM" ] || missing "no Chromium at $CHROMIUM (apt-get install -y chromium)"

# Install the locked npm packages unless node_modules already matches the lockfile.
if ! cmp -s "$here/package-lock.json" "$here/node_modules/.forkgraph-lock" 2>/dev/null; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) ||
    missing "npm ci failed (is the npm registry reachable?)"
  cp "$here/package-lock.json" "$here/node_modules/.forkgraph-lock"
fi

tmp=$(mktemp -d)
server_pids=()
cleanup() {
  for pid in "${server_pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
    fi
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

# make test builds the server once for its three shell suites and passes it as FORKGRAPH_BIN;
# run alone, the script builds its own.
bin="${FORKGRAPH_BIN:-$tmp/forkgraph}"
if [ -z "${FORKGRAPH_BIN:-}" ]; then
  echo "building the server"
  (cd "$repo" && "$GO" build -o "$bin" .) || { echo "FAIL: go build" >&2; exit 1; }
fi

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# start_server NAME [FLAGS...] starts a server with its own database and prints its base URL once
# /healthz answers. The server is an external process, so a bounded poll is how to await it.
start_server() {
  local name=$1; shift
  local port; port=$(free_port)
  local base="http://127.0.0.1:$port"
  "$bin" -addr "127.0.0.1:$port" -db "$tmp/$name.db" -sim-latency 150ms "$@" >"$tmp/$name.log" 2>&1 &
  local pid=$!
  server_pids+=("$pid")
  for _ in $(seq 1 150); do
    kill -0 "$pid" 2>/dev/null || break
    if node -e "fetch('$base/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"; then
      echo "$base"
      return 0
    fi
    sleep 0.2
  done
  echo "FAIL: the $name server did not become healthy at $base; its log:" >&2
  cat "$tmp/$name.log" >&2
  return 1
}

# A JWT issuer (test/issuer.mjs: discovery, JWKS, and /mint for the tests), before the server
# that trusts it.
issuer_port=$(free_port)
ISSUER_PORT=$issuer_port node "$here/test/issuer.mjs" >"$tmp/issuer.url" 2>"$tmp/issuer.log" &
server_pids+=("$!")
issuer=http://127.0.0.1:$issuer_port
for _ in $(seq 1 100); do
  node -e "fetch('$issuer/jwks').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" && break
  sleep 0.1
done

# The open (development-mode) server most tests use; one that requires credentials: a -tokens
# token (every scope), a tokens file with a read-only token, and the issuer's JWTs; and one that
# lets a page on one other origin (served by origins.test.mjs on cors_page_port) use it.
token="pw-token-0123456789abcdef"
reader="pw-reader-0123456789abcdef"
printf 'reader %s demo read\n' "$reader" >"$tmp/tokens.txt"
cors_page_port=$(free_port)
start_server open >"$tmp/open.url" || exit 1
start_server tokens -tokens "$token=demo" -tokens-file "$tmp/tokens.txt" \
  -oidc-issuer "$issuer" -jwt-audience "https://forkgraph.test/playground" >"$tmp/tokens.url" || exit 1
start_server cors -cors-origins "http://127.0.0.1:$cors_page_port" >"$tmp/cors.url" || exit 1
base=$(cat "$tmp/open.url")
token_base=$(cat "$tmp/tokens.url")
cors_base=$(cat "$tmp/cors.url")
echo "servers ready at $base, (with credentials) $token_base and (with -cors-origins) $cors_base; issuer $issuer"

mkdir -p "$here/artifacts"
(cd "$here" && FORKGRAPH_URL="$base" FORKGRAPH_TOKEN_URL="$token_base" FORKGRAPH_TOKEN="$token" \
  FORKGRAPH_READER_TOKEN="$reader" FORKGRAPH_ISSUER="$issuer" \
  FORKGRAPH_CORS_URL="$cors_base" FORKGRAPH_CORS_PAGE_PORT="$cors_page_port" node --test --test-concurrency=1 --test-timeout=120000 ${BROWSER_TESTS:-test/*.test.mjs})
rc=$?
if [ $rc -ne 0 ]; then
  echo "--- server log (last 60 lines) ---" >&2
  tail -n 60 "$tmp/open.log" >&2
  exit 1
fi
echo "screenshots: $here/artifacts/"
exit 0
