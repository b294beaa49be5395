#!/usr/bin/env bash
# Fails when schema.graphqls has a breaking change against schema.baseline.graphqls (the schema
# of the last release) that CHANGELOG.md's "## Unreleased" section does not name by its path.
# It needs no git history, so it works on a shallow CI clone. The check's own tests run first.
# At a release: give Unreleased a version heading, start a new empty Unreleased, and
# `cp schema.graphqls schema.baseline.graphqls` in the same commit (see CHANGELOG.md).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/schema-tools.sh
node --test "$schema_tools/breaking.test.mjs" >/dev/null ||
  { node --test "$schema_tools/breaking.test.mjs"; exit 1; }
node "$schema_tools/breaking.mjs" schema.baseline.graphqls schema.graphqls CHANGELOG.md
