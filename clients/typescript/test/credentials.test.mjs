// Streams that end with their credential, against the real server and a real JWT issuer: a
// watch opened with a JWT that expires in ~3 s ends with TOKEN_EXPIRED (websocket close 4403, or
// SSE's last error event), the client asks its token provider for a fresh token and resumes from
// its last cursor, with every event of the log seen once; a static token removed from the tokens
// file ends the stream with TOKEN_REVOKED, and a provider with no other token gets a
// CredentialError and a watch that waits (status `unauthenticated`) until resume().
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanup, eventCursor, gql, report, startIssuer, startServer, tokensFile, uniqueWorkspace, until } from './harness.mjs';
import { closeClients, collect, createSSEClient, ids, newClient, noRepeat, truth } from './lib.mjs';
import { CredentialError, documents } from '../dist/index.js';

let issuer;
let server;

before(async () => {
  issuer = await startIssuer();
  server = await startServer({ flags: issuer.jwtFlags });
});
after(async () => {
  closeClients();
  await cleanup();
});

/** gate is a promise the test opens: the provider waits on it, so the stream's gap is the test's to fill. */
function gate() {
  let open;
  const promise = new Promise((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const bearer = (token) => ({ authorization: `Bearer ${token}` });

for (const transport of ['ws', 'sse']) {
  describe(`a JWT's stream over ${transport}`, () => {
    test('ends with TOKEN_EXPIRED at exp; the provider gives a fresh token and the watch resumes: nothing lost, nothing twice', async () => {
      const ws = uniqueWorkspace(`expiry-${transport}`);
      const writer = bearer(await issuer.mint({ sub: 'writer', scope: 'read ingest', workspaces: ws }));
      const start = await eventCursor(server.url, ws, writer);
      await report(server.url, ws, 'first', {}, writer);

      // The app's provider: a token that expires in 3 s; asked to refresh, it mints a long one,
      // once the test has moved the workspace on while the client has no stream.
      const refresh = gate();
      const calls = [];
      let current = await issuer.mint({ sub: 'viewer', scope: 'read', workspaces: ws, ttl: 3 });
      const token = async ({ forceRefresh }) => {
        calls.push(forceRefresh);
        if (forceRefresh) {
          await refresh.promise;
          current = await issuer.mint({ sub: 'viewer', scope: 'read', workspaces: ws });
        }
        return current;
      };
      const options = transport === 'sse' ? { token, subscriptions: 'sse', sseClient: createSSEClient } : { token };
      const client = newClient(server.url, options);
      const w = collect(client, { workspaceId: ws, after: start });
      await w.until(() => w.events.some((e) => e.sessionId === 'first'), 'the replay');
      await report(server.url, ws, 'live', {}, writer);
      await w.until(() => w.events.some((e) => e.sessionId === 'live'), 'a live event');

      await w.until(() => w.errors.length > 0, 'the stream to end with its token');
      assert.equal(w.errors[0].code, 'TOKEN_EXPIRED', `the stream ended with ${w.errors.map((e) => `${e.code}: ${e.message}`)}`);
      assert.ok(!(w.errors[0] instanceof CredentialError));
      await until(() => calls.includes(true), { what: 'the provider asked for a fresh token' });
      for (let i = 0; i < 3; i++) await report(server.url, ws, `missed-${i}`, {}, writer);
      refresh.open();
      await w.until(() => w.events.some((e) => e.sessionId === 'missed-2'), 'the replay of what the gap missed');
      await report(server.url, ws, 'end', {}, writer);
      await w.until(() => w.events.some((e) => e.sessionId === 'end'), 'a live event on the fresh token');

      assert.deepEqual(w.errors.map((e) => e.code), ['TOKEN_EXPIRED'], 'one end, one resume');
      assert.equal(w.watch.status, 'live');
      noRepeat(ids(w.events));
      assert.deepEqual(ids(w.events), await truth(server.url, ws, 'end', { start, token: writer.authorization.slice(7) }), 'the events seen are the log from its start');
      assert.equal(calls.filter(Boolean).length, 1, 'one refresh');
    });
  });
}

describe('HTTP', () => {
  test('UNAUTHENTICATED token_expired: the provider is asked to refresh and the request is sent again', async () => {
    const ws = uniqueWorkspace('http-expired');
    const answers = [];
    const recording = async (url, init) => {
      const r = await fetch(url, init);
      const body = await r.clone().json().catch(() => null);
      answers.push(body?.errors?.[0]?.extensions ?? 'data');
      return r;
    };
    const calls = [];
    const expired = await issuer.mint({ workspaces: ws, ttl: -5 });
    const token = async ({ forceRefresh }) => {
      calls.push(forceRefresh);
      return forceRefresh ? issuer.mint({ workspaces: ws }) : expired;
    };
    const client = newClient(server.url, { token, fetch: recording });
    const data = await client.request(documents.WorkspaceEventCursorDocument, { workspaceId: ws });
    assert.ok(data.workspaceEventCursor);
    assert.deepEqual(calls, [false, true]);
    assert.equal(answers.length, 2);
    assert.equal(answers[0].code, 'UNAUTHENTICATED');
    assert.equal(answers[0].reason, 'token_expired');
    assert.equal(answers[1], 'data');

    // A provider with nothing newer: one CredentialError with the server's code, and the same
    // token is not sent twice.
    const stuck = newClient(server.url, { token: expired, fetch: recording });
    answers.length = 0;
    await assert.rejects(stuck.request(documents.WorkspaceEventCursorDocument, { workspaceId: ws }), (err) => {
      assert.ok(err instanceof CredentialError, `a CredentialError, not ${err.name}`);
      assert.equal(err.code, 'UNAUTHENTICATED');
      assert.equal(err.reason, 'token_expired');
      return true;
    });
    assert.equal(answers.length, 1, 'the refused token was sent once');
  });
});

describe('a static token removed from the tokens file', () => {
  for (const transport of ['ws', 'sse']) {
    test(`over ${transport}: TOKEN_REVOKED, then a CredentialError while the provider has no other token; resume() with a new one loses nothing`, async () => {
      const ws = uniqueWorkspace(`revoked-${transport}`);
      const writerToken = `writer-${transport}-0123456789abcdef`;
      const oldToken = `viewer-old-${transport}-0123456789abcdef`;
      const newToken = `viewer-new-${transport}-0123456789abcdef`;
      const tokens = tokensFile([`writer ${writerToken} ${ws} all`, `viewer ${oldToken} ${ws} read`]);
      const writeTokens = tokens.write;
      const secured = await startServer({ flags: ['-tokens-file', tokens.path, '-tokens-file-poll', '50ms'] });
      const writer = bearer(writerToken);
      const start = await eventCursor(secured.url, ws, writer);

      let issued = oldToken; // what the app holds: the old token, until it gets a new one
      const calls = [];
      const token = ({ forceRefresh }) => {
        calls.push(forceRefresh);
        return issued;
      };
      const options = transport === 'sse' ? { token, subscriptions: 'sse', sseClient: createSSEClient } : { token };
      const client = newClient(secured.url, options);
      const w = collect(client, { workspaceId: ws, after: start });
      await report(secured.url, ws, 'before', {}, writer);
      await w.until(() => w.events.some((e) => e.sessionId === 'before'), 'an event on the old token');

      writeTokens([`writer ${writerToken} ${ws} all`]);
      await w.until(() => w.watch.status === 'unauthenticated', 'the watch to wait for a new token');
      assert.equal(w.errors[0].code, 'TOKEN_REVOKED', `the stream ended with ${w.errors.map((e) => e.code)}`);
      const last = w.errors.at(-1);
      assert.ok(last instanceof CredentialError, `then a CredentialError, not ${last.name}: ${last.message}`);
      assert.equal(last.code, 'TOKEN_REVOKED');
      assert.ok(calls.includes(true), 'the provider was asked for a new token');
      await assert.rejects(client.request(documents.WorkspaceEventCursorDocument, { workspaceId: ws }), (err) => err instanceof CredentialError && err.code === 'UNAUTHENTICATED');

      // The workspace moves on; the app signs in again and resumes the watch.
      for (let i = 0; i < 3; i++) await report(secured.url, ws, `missed-${i}`, {}, writer);
      writeTokens([`writer ${writerToken} ${ws} all`, `viewer ${newToken} ${ws} read`]);
      await until(() => gql(secured.url, `{ viewer { subject } }`, {}, bearer(newToken)).then(() => true, () => false), { what: 'the server to take the new token' });
      issued = newToken;
      w.watch.resume();
      await w.until(() => w.events.some((e) => e.sessionId === 'missed-2'), 'the replay after resume()');
      await report(secured.url, ws, 'end', {}, writer);
      await w.until(() => w.events.some((e) => e.sessionId === 'end'), 'a live event on the new token');
      assert.equal(w.watch.status, 'live');
      noRepeat(ids(w.events));
      assert.deepEqual(ids(w.events), await truth(secured.url, ws, 'end', { start, token: writerToken }));
      client.close();
      await secured.stop();
    });
  }
});
