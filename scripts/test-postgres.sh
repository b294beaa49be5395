#!/usr/bin/env bash
# Runs the store contract suite, the multi-instance suite (internal/multiinstance: real server
# processes on one database) and the resolvers' PostgreSQL cases against a throwaway PostgreSQL
# cluster on 127.0.0.1 when the server binaries are available (scripts/start-postgres.sh finds or
# installs them). Without them it says so loudly and runs only the multi-instance suite's SQLite
# tests; under CI it fails instead.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! out=$(bash scripts/start-postgres.sh); then
  if [ "${CI:-}" = "true" ]; then echo "FAILED: could not start PostgreSQL for the store suite" >&2; exit 1; fi
  echo "*** SKIPPED: store contract and multi-instance suites on PostgreSQL (no PostgreSQL server available)" >&2
  env -u FORKGRAPH_TEST_POSTGRES_DSN go test -race -count=1 ./internal/multiinstance/...
  exit 0
fi
eval "$out"
trap 'bash scripts/start-postgres.sh stop "$FORKGRAPH_PG_DIR" >/dev/null 2>&1 || true' EXIT
FORKGRAPH_TEST_POSTGRES_DSN="$FORKGRAPH_TEST_POSTGRES_DSN" go test -race -count=1 ./store/... ./internal/crashharness/... ./internal/multiinstance/...
# The resolvers' PostgreSQL cases (the scope matrix); their SQLite cases ran with test-go.
FORKGRAPH_TEST_POSTGRES_DSN="$FORKGRAPH_TEST_POSTGRES_DSN" go test -race -count=1 -run 'TestScopeMatrix/PostgreSQL' ./resolvers/
# The whole server on PostgreSQL (internal/servertest); its SQLite cases ran with test-go.
FORKGRAPH_TEST_POSTGRES_DSN="$FORKGRAPH_TEST_POSTGRES_DSN" go test -race -count=1 -run PostgreSQL ./internal/server/
