#!/usr/bin/env bash
# List the hand-written files that spell a field, and fail above a bound (issue 23: adding a
# Session field should touch at most five places: the schema, the domain struct, the table
# description, a migration, and the view when the field is projected).
#
#   scripts/check-field-places.sh [-max N] GoName column_name graphqlName
#   scripts/check-field-places.sh RailSectionKey rail_section_key railSectionKey
#
# It greps the tracked tree for each spelling, leaving out tests, generated code (graph/,
# models/models_gen.go), the schema baseline of the last release, docs and the clients, and
# counts the files. Exit 1 when more than N files (default 5) spell the field.
set -euo pipefail

max=5
if [ "${1:-}" = "-max" ]; then
	max="$2"
	shift 2
fi
if [ $# -lt 1 ]; then
	echo "usage: $0 [-max N] GoName [column_name] [graphqlName]" >&2
	exit 2
fi
cd "$(dirname "$0")/.."

pattern="$(printf '%s|' "$@")"
pattern="\\b(${pattern%|})\\b"
files="$(git grep -l -E "$pattern" -- ':!*_test.go' ':!graph/*' ':!models/models_gen.go' ':!schema.baseline.graphqls' \
	':!*.md' ':!docs/*' ':!clients/*' ':!e2e/*' ':!web/*' ':!scripts/check-field-places.sh' \
	':!forkengine/forkenginetest/storetest*.go' || true)"
n=0
if [ -n "$files" ]; then
	n="$(printf '%s\n' "$files" | wc -l | tr -d ' ')"
	printf '%s\n' "$files"
fi
echo "$* is spelled in $n files (at most $max allowed)"
[ "$n" -le "$max" ]
