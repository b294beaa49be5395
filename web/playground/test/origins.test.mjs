// Cross-origin pages (issue 10, DNS rebinding and CSRF-style reads): a page served from another
// origin can neither read /graphql (POST with JSON, which needs a preflight, nor a simple GET)
// nor open the websocket, unless the server lists that origin in -cors-origins. test-browser.sh
// starts a server with -cors-origins http://127.0.0.1:$FORKGRAPH_CORS_PAGE_PORT; the test serves
// a blank page on that port (the allowed origin) and on an ephemeral one (a foreign origin).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { BASE, launch } from './harness.mjs';

const CORS_BASE = process.env.FORKGRAPH_CORS_URL;
const ALLOWED_PORT = Number(process.env.FORKGRAPH_CORS_PAGE_PORT);
const TIMEOUT = 20_000;

function servePage(port) {
  return new Promise((resolve) => {
    const srv = createServer((_, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>another origin</title><p>another origin</p>');
    });
    srv.listen(port, '127.0.0.1', () => resolve(srv));
  });
}

// probe runs, inside a page of some origin, a JSON POST, a simple GET and a websocket against
// target, and reports what the page could see.
async function probe(page, target) {
  return page.evaluate(async (base) => {
    const out = {};
    try {
      const res = await fetch(`${base}/graphql`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ sessions(workspaceId: "demo") { totalCount } }' }),
      });
      out.post = (await res.json()).data ? 'read' : 'no data';
    } catch (e) { out.post = 'blocked'; }
    try {
      const res = await fetch(`${base}/graphql?query=${encodeURIComponent('{ sessions(workspaceId: "demo") { totalCount } }')}`);
      out.get = (await res.json()).data ? 'read' : 'no data';
    } catch (e) { out.get = 'blocked'; }
    out.websocket = await new Promise((resolve) => {
      const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
      ws.onopen = () => ws.send(JSON.stringify({ type: 'connection_init' }));
      ws.onmessage = (m) => { resolve(JSON.parse(m.data).type === 'connection_ack' ? 'acked' : 'other'); ws.close(); };
      ws.onerror = () => resolve('blocked');
    });
    return out;
  }, target);
}

let browser;
let allowed;
let foreign;
before(async () => {
  assert.ok(CORS_BASE && ALLOWED_PORT, 'test-browser.sh starts a server with -cors-origins and passes its URL and page port');
  allowed = await servePage(ALLOWED_PORT);
  foreign = await servePage(0);
  browser = await launch();
});
after(async () => {
  allowed?.close();
  foreign?.close();
  if (!browser) return;
  await browser.close();
  assert.deepEqual(browser.blocked, [], 'the page tried to reach outside 127.0.0.1');
});

test('a page on a foreign origin can neither read /graphql nor open the websocket', async () => {
  const { page } = browser;
  await page.goto(`http://127.0.0.1:${foreign.address().port}/`, { timeout: TIMEOUT });
  assert.deepEqual(await probe(page, CORS_BASE), { post: 'blocked', get: 'blocked', websocket: 'blocked' });
  assert.deepEqual(await probe(page, BASE), { post: 'blocked', get: 'blocked', websocket: 'blocked' },
    'nor against a server that allows no other origin');
});

test('a page on an origin listed in -cors-origins reads /graphql and opens the websocket', async () => {
  const { page } = browser;
  await page.goto(`http://127.0.0.1:${ALLOWED_PORT}/`, { timeout: TIMEOUT });
  assert.deepEqual(await probe(page, CORS_BASE), { post: 'read', get: 'read', websocket: 'acked' });
  assert.deepEqual(await probe(page, BASE), { post: 'blocked', get: 'blocked', websocket: 'blocked' },
    'the allow-list is per server');
});

test("the playground, the server's own origin, still works", async () => {
  const { page } = browser;
  await page.goto(`${CORS_BASE}/`, { timeout: TIMEOUT });
  assert.deepEqual(await probe(page, CORS_BASE), { post: 'read', get: 'read', websocket: 'acked' });
});
