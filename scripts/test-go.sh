#!/usr/bin/env bash
# make test's Go suite: every package's tests once, with the race detector, and the PostgreSQL
# ones (the store contract suite, the multi-instance suite, the crash harness's takeover, the
# resolvers' and the server's PostgreSQL cases) in the same run against one throwaway cluster
# (scripts/start-postgres.sh). `make test-go` and `make test-postgres` stay for running either
# half alone; make test ran both before, and so ran the store's and the crash harness's SQLite
# tests twice (about 50 s of two cores), linked their race-built test binaries twice and started
# the PostgreSQL suites only after the rest had finished.
#
# Without PostgreSQL server binaries it says so loudly and runs the rest (the PostgreSQL tests
# skip themselves); under CI=true that is a failure, as it was for test-postgres.
#
# The packages whose tests wait longest go first, so `go test` (two test binaries at a time)
# starts them first instead of leaving one of them alone at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
first=(./store ./internal/multiinstance ./internal/crashharness ./transports ./internal/server
  ./internal/adaptere2e ./resolvers ./internal/firstrun)
mod=$($GO list -m)
rest=()
for pkg in $($GO list ./...); do
  keep=1
  for f in "${first[@]}"; do
    [ "$pkg" = "$mod/${f#./}" ] && keep=0
  done
  [ $keep -eq 1 ] && rest+=("$pkg")
done

if ! out=$(bash scripts/start-postgres.sh); then
  if [ "${CI:-}" = "true" ]; then echo "FAILED: could not start PostgreSQL for the Go suite's PostgreSQL tests" >&2; exit 1; fi
  printf '\n*** SKIPPED: the PostgreSQL tests (store contract, multi-instance, ...): no PostgreSQL server available\n\n' >&2
  env -u FORKGRAPH_TEST_POSTGRES_DSN $GO test -race -count=1 "${first[@]}" "${rest[@]}"
  exit 0
fi
eval "$out"
logs=$(mktemp -d)
trap 'bash scripts/start-postgres.sh stop "$FORKGRAPH_PG_DIR" >/dev/null 2>&1 || true; rm -rf "$logs"' EXIT
export FORKGRAPH_TEST_POSTGRES_DSN
# store is the longest package by far (its PostgreSQL tests, the contract suite among them, wait on
# the server; its SQLite tests on the CPU), so it runs as two go tests of its own beside the rest:
# its top-level tests named Postgres, and the others (-run and -skip on one pattern: each test
# runs exactly once). Their output follows the rest's.
$GO test -race -count=1 -run Postgres ./store >"$logs/store-postgres" 2>&1 &
pg_pid=$!
$GO test -race -count=1 -skip Postgres ./store >"$logs/store-other" 2>&1 &
other_pid=$!
rc=0
$GO test -race -count=1 "${first[@]:1}" "${rest[@]}" || rc=$?
for half in postgres:$pg_pid other:$other_pid; do
  half_rc=0
  wait "${half#*:}" || half_rc=$?
  echo "--- store, its tests $( [ "${half%%:*}" = postgres ] && echo "named Postgres (-run Postgres)" || echo "not named Postgres (-skip Postgres)"):"
  cat "$logs/store-${half%%:*}"
  [ $half_rc -eq 0 ] || { echo "FAILED: store's tests ${half%%:*}" >&2; rc=1; }
done
exit $rc
