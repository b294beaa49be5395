# Sourced by the schema scripts: installs the pinned Node tools of tools/schema/ from its lockfile
# (npm ci; only the npm registry is needed) and exits 3, which scripts/run-optional.sh reports as
# SKIPPED (or a failure under CI), when Node or the registry is missing.
for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "schema tools: $tool is not installed" >&2; exit 3; }
done
schema_tools="$(cd "$(dirname "${BASH_SOURCE[0]}")/../tools/schema" && pwd)"
if [ ! -d "$schema_tools/node_modules" ] || [ "$schema_tools/package-lock.json" -nt "$schema_tools/node_modules/.package-lock.json" ]; then
  (cd "$schema_tools" && npm ci --no-audit --no-fund --loglevel=error) ||
    { echo "schema tools: npm ci failed (is the npm registry reachable?)" >&2; exit 3; }
fi
