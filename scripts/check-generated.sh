#!/usr/bin/env bash
# Fails when `go generate ./...` changes graph/ or models/models_gen.go: generated code is committed
# up to date and never edited by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
snapshot() { find graph models -name '*.go' -type f 2>/dev/null | sort | xargs -r sha256sum; }
before=$(snapshot)
go generate ./...
after=$(snapshot)
if [ "$before" != "$after" ]; then
  echo "generated code was stale: go generate ./... changed it (now regenerated; commit the result)" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
echo "generated code is up to date"
