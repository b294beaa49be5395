#!/usr/bin/env bash
# Lints schema.graphqls with graphql-schema-linter's default rules, minus the alphabetical-order
# ones (the schema is ordered by meaning), as configured in .graphql-schema-linterrc.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/schema-tools.sh
"$schema_tools/node_modules/.bin/graphql-schema-linter" --config-directory . --format text
echo "schema lint: schema.graphqls passes graphql-schema-linter"
