// The breaking-change check itself: it must fail on an unnamed breaking change and pass once the
// changelog's Unreleased section names it. Run by scripts/check-schema-changes.sh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { check, unreleased } from './breaking.mjs';

const before = `type Query { a: Int, b(first: Int): String }`;
const removed = `type Query { a: Int }`;
const changelog = (entries) => `# Changelog\n\n## Unreleased\n\n${entries}\n\n## 1.0.0\n\n- \`Query.b\` was added\n`;

test('a removed field not in Unreleased is unnamed', async () => {
  const { unnamed } = await check(before, removed, changelog('- something else'));
  assert.deepEqual(unnamed.map((c) => c.path), ['Query.b']);
});

test('an entry in an older release does not count', async () => {
  const { unnamed } = await check(before, removed, changelog(''));
  assert.equal(unnamed.length, 1);
});

test('naming the path in Unreleased passes', async () => {
  const { breaking, unnamed } = await check(before, removed, changelog('- **Breaking:** `Query.b` removed'));
  assert.equal(breaking.length, 1);
  assert.equal(unnamed.length, 0);
});

test('a removed argument is breaking and named by its path', async () => {
  const { unnamed } = await check(before, `type Query { a: Int, b: String }`, changelog(''));
  assert.deepEqual(unnamed.map((c) => c.path), ['Query.b.first']);
});

test('additions are not breaking', async () => {
  const { breaking } = await check(before, `type Query { a: Int, b(first: Int, last: Int): String, c: ID }`, changelog(''));
  assert.equal(breaking.length, 0);
});

test('a changelog without an Unreleased section is an error', async () => {
  await assert.rejects(check(before, before, '# Changelog\n\n## 1.0.0\n'), /Unreleased/);
  assert.equal(unreleased('# C\n\n## Unreleased\n\nx\n'), '\nx\n');
});
