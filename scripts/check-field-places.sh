#!/usr/bin/env bash
# List the hand-written files that spell a field, and fail above a bound (issue 23: adding a
# Session field should touch at most five places: the schema, the domain struct, the table
# description, a migration, and the view when the field is projected).
#
#   scripts/check-field-places.sh [-max N] [-allow FILE] GoName column_name graphqlName
#   scripts/check-field-places.sh RailSectionKey rail_section_key railSectionKey
#   scripts/check-field-places.sh -known     # every field below; make check runs this
#
# It greps the tracked tree for each spelling, leaving out tests, generated code (graph/,
# models/models_gen.go), the schema baseline of the last release, docs and the clients, and
# counts the files; schema.graphqls and store/migrations.go count as places. -allow FILE (repeatable)
# names a file that may spell the field beyond the bound, for a rule only that field has. Exit 1 when more
# than N files (default 5) spell the field.
set -euo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/.."

# The Session fields make check holds to five places. The generic plumbing (a report's merge,
# compare and checks, the snapshot codecs, the snapshot hash) is derived from the tags of
# forkengine/entities.go, so none of them needs a sixth.
known() {
	local failed=0
	bash "$self" RailSectionKey rail_section_key railSectionKey || failed=1
	# The demo of issue 23: a field the reference asks for (§1.1), added in those five places alone.
	bash "$self" RailProjectPath rail_project_path railProjectPath || failed=1
	# Metadata's sixth place is its fork rule (reference §1.1): a child gets its source's metadata
	# without the keys imported, usage and goal (forkengine/fork_target.go, childMetadata), which
	# no tag can say. Nothing else may need its name.
	bash "$self" -allow forkengine/fork_target.go Metadata metadata metadata || failed=1
	# RuntimeContext's sixth place is its fork rule (forkengine/fork_target.go, childFieldRules: the
	# child gets the prepared context). A fork's target carries a context of its own, called
	# PreparedContext in Go (forkengine.TargetInput and ForkTarget), whose names on the wire are
	# still runtimeContext: the GraphQL ForkTargetInput/ForkTarget field (read in models/inputs.go
	# from the generated input), the JSON key of the frozen target in fork_target.go (the request
	# hash and every stored operation encode it), and the webhook /fork body's target (sent by
	# providers/webhook/wire.go, read by the reference adapter's wire.go). Those three files spell
	# the wire name and nothing of the session's field; any other file is a place too many.
	bash "$self" -allow forkengine/fork_target.go -allow models/inputs.go -allow providers/webhook/wire.go \
		-allow examples/provider-adapter/wire.go RuntimeContext runtime_context runtimeContext || failed=1
	return "$failed"
}

max=5
allow=""
while [ $# -gt 0 ]; do
	case "$1" in
	-known)
		known
		exit
		;;
	-max)
		max="$2"
		shift 2
		;;
	-allow)
		allow="$allow$2"$'\n'
		shift 2
		;;
	*) break ;;
	esac
done
if [ $# -lt 1 ]; then
	echo "usage: $0 [-max N] [-allow FILE] GoName [column_name] [graphqlName] | $0 -known" >&2
	exit 2
fi

pattern="$(printf '%s|' "$@")"
pattern="\\b(${pattern%|})\\b"
files="$(git grep -l -E "$pattern" -- ':!*_test.go' ':!graph/*' ':!models/models_gen.go' ':!schema.baseline.graphqls' \
	':!*.md' ':!docs/*' ':!clients/*' ':!e2e/*' ':!web/*' ':!scripts/check-field-places.sh' \
	':!forkengine/forkenginetest/storetest*.go' || true)"
n=0
while IFS= read -r allowed; do
	if [ -n "$allowed" ] && [ -n "$files" ] && printf '%s\n' "$files" | grep -qxF "$allowed"; then
		echo "$allowed (allowed: a rule of this field alone, or a wire name it shares)"
		files="$(printf '%s\n' "$files" | grep -vxF "$allowed" || true)"
	fi
done <<<"$allow"
if [ -n "$files" ]; then
	n="$(printf '%s\n' "$files" | wc -l | tr -d ' ')"
	printf '%s\n' "$files"
fi
echo "$* is spelled in $n files (at most $max allowed)"
[ "$n" -le "$max" ]
