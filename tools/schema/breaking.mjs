// Fails when schema.graphqls has a breaking change, against the last release's schema
// (schema.baseline.graphqls), that CHANGELOG.md's "## Unreleased" section does not name.
// A change is named when its path as printed here (for example `Query.sessions` or
// `PageInfo.endCursor`) appears in that section. Dangerous changes (a new enum value, a changed
// default) are listed as warnings only.
//
// Usage: node breaking.mjs <baseline.graphqls> <schema.graphqls> <CHANGELOG.md>
import { readFileSync } from 'node:fs';
import { buildSchema } from 'graphql';
import { diff, CriticalityLevel } from '@graphql-inspector/core';

// unreleased returns the text of the changelog's "## Unreleased" section, or null without one.
export function unreleased(changelog) {
  const match = changelog.match(/^## Unreleased[^\n]*\n([\s\S]*?)(?=^## |(?![\s\S]))/m);
  return match ? match[1] : null;
}

// check compares two schema sources and returns the breaking changes the changelog section does
// not name, plus every breaking and dangerous change for the report.
export async function check(baselineSDL, schemaSDL, changelog) {
  const section = unreleased(changelog);
  if (section === null) throw new Error('CHANGELOG.md has no "## Unreleased" section');
  const changes = await diff(buildSchema(baselineSDL), buildSchema(schemaSDL));
  const breaking = changes.filter((c) => c.criticality.level === CriticalityLevel.Breaking);
  const dangerous = changes.filter((c) => c.criticality.level === CriticalityLevel.Dangerous);
  const unnamed = breaking.filter((c) => !section.includes(c.path ?? c.message));
  return { breaking, dangerous, unnamed };
}

async function main([baseline, schema, changelog]) {
  const read = (p) => readFileSync(p, 'utf8');
  const { breaking, dangerous, unnamed } = await check(read(baseline), read(schema), read(changelog));
  for (const c of dangerous) console.log(`dangerous: ${c.path}: ${c.message}`);
  for (const c of breaking) console.log(`breaking:  ${c.path}: ${c.message}`);
  if (unnamed.length > 0) {
    console.error(`\n${unnamed.length} breaking schema change(s) not named in CHANGELOG.md's Unreleased section:`);
    for (const c of unnamed) console.error(`  \`${c.path}\`: ${c.message}`);
    console.error('Add an entry that names each path (a breaking change needs a migration note for clients).');
    process.exit(1);
  }
  console.log(`schema changes since ${baseline}: ${breaking.length} breaking (all in CHANGELOG.md), ${dangerous.length} dangerous`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(err.message);
    process.exit(2);
  });
}
