#!/usr/bin/env bash
# The TypeScript client's suite (run by `make test` as test-client):
#   1. the generated operation types are up to date with schema.graphqls (graphql-codegen --check);
#   2. the package builds with tsc (ESM + declarations);
#   3. the Node tests (node --test) run against real forkgraph servers built from this checkout;
#   4. the consumer checks: `npm pack`'s tarball installs into an empty project, the declarations
#      compile there under tsc --strict (test/consumer/usage.ts and README.md's examples), and
#      README.md's examples run against a server with the seeded demo workspace: the Node one as
#      it stands, the React one rendered by test/consumer/react-example.mjs (react-test-renderer),
#      which opens a session, clicks Fork and waits for the acknowledged child.
# Exit status: 0 passed, 1 failed, 3 a needed tool is missing (node, npm, go) or npm ci failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
GO=${GO:-go}
cd "$here"

missing() {
  printf '\n*** TypeScript client suite cannot run: %s\n\n' "$1" >&2
  exit 3
}
for tool in node npm "$GO"; do
  command -v "$tool" >/dev/null 2>&1 || missing "$tool is not installed"
done
if ! cmp -s package-lock.json node_modules/.forkgraph-lock 2>/dev/null; then
  npm ci --no-audit --no-fund --loglevel=error || missing "npm ci failed (is the npm registry reachable?)"
  cp package-lock.json node_modules/.forkgraph-lock
fi

tmp=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $1" >&2
  exit 1
}

echo "client: generated types are up to date"
npx graphql-codegen --config codegen.ts --check >"$tmp/codegen.log" 2>&1 ||
  { cat "$tmp/codegen.log" >&2; fail "src/generated/graphql.ts is stale: run npm --prefix clients/typescript run codegen and commit it"; }

# npm pack runs the build (prepack: tsc), so packing first builds dist/ once for the Node tests
# and the tarball both, the way a publish would build it.
echo "client: build (npm pack's prepack)"
npm pack --silent --pack-destination "$tmp" >"$tmp/pack.log" ||
  { cat "$tmp/pack.log" >&2; fail "npm pack (its prepack runs the tsc build)"; }

if [ -z "${FORKGRAPH_BIN:-}" ]; then
  echo "client: building the server"
  (cd "$repo" && "$GO" build -o "$tmp/forkgraph" .) || fail "go build"
  export FORKGRAPH_BIN="$tmp/forkgraph"
fi

echo "client: node tests against the real server"
node --test --test-concurrency=1 --test-timeout=120000 test/*.test.mjs || fail "node tests"

echo "client: the packed tarball, installed into an empty project, compiled under --strict, the README examples run"
tarball="$tmp/$(tail -n 1 "$tmp/pack.log")"
[ -f "$tarball" ] || fail "npm pack made no tarball ($tarball)"
consumer="$tmp/consumer"
mkdir -p "$consumer"
cat >"$consumer/package.json" <<JSON
{ "name": "consumer", "private": true, "type": "module" }
JSON
# The peers and tools at the versions the package is tested with (package-lock.json), from npm's
# cache when it has them.
ver() { node -p "require('$here/package-lock.json').packages['node_modules/$1'].version"; }
deps=("$tarball")
for dep in graphql-ws ws react react-test-renderer @types/react @types/ws @types/node typescript; do
  v=$(ver "$dep") || fail "no locked version of $dep"
  deps+=("$dep@$v")
done
(cd "$consumer" && npm install --prefer-offline --no-audit --no-fund --loglevel=error "${deps[@]}") ||
  fail "installing the tarball into an empty project"
cp test/consumer/tsconfig.json test/consumer/usage.ts test/consumer/react-example.mjs "$consumer/"
node scripts/readme-examples.mjs README.md "$consumer" || fail "extracting README.md's examples"
(cd "$consumer" && npx tsc -p tsconfig.json) || fail "the consumer project does not compile under --strict"
port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
"$FORKGRAPH_BIN" -addr "127.0.0.1:$port" -db "$tmp/demo.db" -sim-latency 100ms >"$tmp/demo.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
  node -e "fetch('http://127.0.0.1:$port/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/demo.log" >&2; fail "the demo server exited"; }
  sleep 0.1
done
(cd "$consumer" && FORKGRAPH_URL="http://127.0.0.1:$port/graphql" timeout 60 node out/readme-example.js) >"$tmp/example.log" 2>&1 ||
  { cat "$tmp/example.log" >&2; fail "README.md's example did not run"; }
cat "$tmp/example.log"
grep -q 'acknowledged: true' "$tmp/example.log" || fail "README.md's example did not end with an acknowledged fork"
(cd "$consumer" && FORKGRAPH_URL="http://127.0.0.1:$port/graphql" timeout 60 node react-example.mjs) >"$tmp/react-example.log" 2>&1 ||
  { cat "$tmp/react-example.log" >&2; fail "README.md's React example did not run"; }
cat "$tmp/react-example.log"
grep -q 'acknowledged: true' "$tmp/react-example.log" || fail "README.md's React example did not end with an acknowledged fork"
echo "client: all passed"
