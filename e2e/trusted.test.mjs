// A server started with -trusted-documents trusted-documents.json (the id → document manifest
// GraphQL Code Generator's client preset writes, sha256 ids) runs the manifest's documents,
// named by documentId or by Apollo's persistedQuery hash, and refuses anything else: an ad-hoc
// query, an ad-hoc write (which changes nothing), an unknown id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { unique } from './lib.mjs';

const base = process.env.FORKGRAPH_TRUSTED_URL;
const url = `${base}/graphql`;
const manifest = JSON.parse(readFileSync(new URL('./trusted-documents.json', import.meta.url), 'utf8'));
const sha256 = (text) => createHash('sha256').update(text).digest('hex');
const idOf = (prefix) => Object.keys(manifest).find((id) => manifest[id].startsWith(prefix));

async function post(body) {
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}
const code = (body) => body.errors?.[0]?.extensions?.code;

test('the manifest is id → document with sha256 ids', () => {
  assert.ok(base, 'FORKGRAPH_TRUSTED_URL names the trusted-documents server (run.sh starts it)');
  for (const [id, doc] of Object.entries(manifest)) assert.equal(id, sha256(doc));
});

test('trusted documents run by documentId and by persistedQuery hash; nothing else runs', async () => {
  const ws = unique('ws-trusted');
  const count = idOf('query SessionCount');
  const report = idOf('mutation ReportSession');

  const before = await post({ documentId: count, variables: { ws } });
  assert.equal(before.errors, undefined, JSON.stringify(before.errors));
  assert.equal(before.data.sessions.totalCount, 0);

  const adhocRead = await post({ query: `{ sessions(workspaceId: "${ws}") { totalCount } }` });
  assert.equal(code(adhocRead), 'TRUSTED_DOCUMENT_REQUIRED');
  const adhocWrite = await post({
    query: `mutation { reportSession(input: {workspaceId: "${ws}", id: "intruder", provider: "simulated"}) { id } }`,
  });
  assert.equal(code(adhocWrite), 'TRUSTED_DOCUMENT_REQUIRED');
  const unknown = await post({ documentId: sha256('{ __schema { types { name } } }') });
  assert.equal(code(unknown), 'TRUSTED_DOCUMENT_NOT_FOUND');
  const afterRefusals = await post({ documentId: count, variables: { ws } });
  assert.equal(afterRefusals.data.sessions.totalCount, 0, 'the refused write changed nothing');

  const written = await post({ extensions: { persistedQuery: { version: 1, sha256Hash: report } }, variables: { ws, id: 's1' } });
  assert.equal(written.errors, undefined, JSON.stringify(written.errors));
  const byGet = await (await fetch(`${url}?documentId=${count}&variables=${encodeURIComponent(JSON.stringify({ ws }))}`)).json();
  assert.equal(byGet.data.sessions.totalCount, 1);
});
