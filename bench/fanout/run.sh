#!/usr/bin/env bash
# Fan-out benchmark: 10,000 websocket subscribers on the real server (loopback only). Each
# subscriber is one socket here and one in the server, so raise the descriptor limit first.
set -euo pipefail
cd "$(dirname "$0")/../.."
ulimit -n "$(ulimit -Hn)"
need=$(( ${FANOUT_N:-10000} + 512 ))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$need" ]; then
  echo "fanout: ulimit -n is $(ulimit -n), below the $need this run needs" >&2
  exit 1
fi
exec go run ./bench/fanout -repo . -n "${FANOUT_N:-10000}" "$@"
