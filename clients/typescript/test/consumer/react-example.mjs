// Renders README.md's React example (compiled by test.sh into out/readme-react.js, in the consumer
// project that installed the npm pack tarball) against a real server, FORKGRAPH_URL with the
// seeded demo workspace, and uses it as a person would: it waits for the live status line
// (useWorkspaceEvents) and the session list (useSessionGraph), opens a session whose latest turn
// can be forked, clicks its Fork button (useForkThroughTurn), and waits for "forked into" and for
// the server to hold the operation acknowledged. The page's globals (location, WebSocket,
// localStorage) are a browser's, given by Node's stand-ins; react-test-renderer runs the
// components with their effects and no DOM. Exit status 0 when every step happened.
import WebSocket from 'ws';
import { createElement } from 'react';
import TestRenderer from 'react-test-renderer';
import { createForkgraphClient, documents } from '@forkgraph/client';

const url = process.env.FORKGRAPH_URL;
if (!url) throw new Error('FORKGRAPH_URL must name the server');

// A page served by the server: relative URLs resolve against it.
globalThis.location = new URL('/', url);
globalThis.WebSocket = WebSocket;
const items = new Map();
globalThis.localStorage = {
  get length() {
    return items.size;
  },
  key: (i) => [...items.keys()][i] ?? null,
  getItem: (k) => (items.has(k) ? items.get(k) : null),
  setItem: (k, v) => void items.set(k, String(v)),
  removeItem: (k) => void items.delete(k),
  clear: () => items.clear(),
};
// The server drives the updates, not act(); act() wraps only the renderer's own steps (mount, a
// click, unmount), which it flushes at once.
globalThis.IS_REACT_ACT_ENVIRONMENT = false;
function act(fn) {
  globalThis.IS_REACT_ACT_ENVIRONMENT = true;
  try {
    TestRenderer.act(fn);
  } finally {
    globalThis.IS_REACT_ACT_ENVIRONMENT = false;
  }
}

const fail = (message) => {
  console.error(`README React example: ${message}`);
  process.exit(1);
};
const deadline = Date.now() + 45000;
async function until(what, fn) {
  for (;;) {
    const value = fn();
    if (value) return value;
    if (Date.now() > deadline) fail(`timed out waiting for ${what}\n${JSON.stringify(renderer.toJSON()).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
const text = (node) => (typeof node === 'string' ? node : (node.children ?? []).map(text).join(''));

// Which session a person would open: one whose latest turn has a Fork button (read with a client
// of its own, as the README's Node example does).
const probe = createForkgraphClient({ url, webSocketImpl: WebSocket, subscriptions: 'none' });
const { sessions } = await probe.request(documents.SessionsPageDocument, { workspaceId: 'demo', first: 50 });
const source = sessions.edges
  .map((e) => e.node)
  .find((s) => s.lifecycleCapabilities.forkThroughTurn && s.latestTurn?.providerForkBindingAvailable && !s.latestTurn.pendingForkOperation);
if (!source) fail('no forkable session in the demo workspace');

const { App } = await import(new URL('./out/readme-react.js', import.meta.url).href);
let renderer;
act(() => {
  renderer = TestRenderer.create(createElement(App));
});
const root = () => renderer.root;
const buttons = (label) => root().findAll((n) => n.type === 'button' && text(n) === label);

await until('the live status line', () => root().findAll((n) => n.type === 'p' && n.props.role === 'status' && text(n).startsWith('live')).length > 0);
const open = await until(`the session "${source.title}" in the list`, () => buttons(source.title)[0]);
act(() => open.props.onClick());
const fork = await until('an enabled Fork button on its latest turn', () => {
  const row = root().findAll((n) => n.type === 'div' && n.props['data-turn'] === source.latestTurn.localId)[0];
  return row?.findAll((n) => n.type === 'button' && text(n) === 'Fork through this turn' && !n.props.disabled)[0];
});
act(() => fork.props.onClick());
const row = () => root().findAll((n) => n.type === 'div' && n.props['data-turn'] === source.latestTurn.localId)[0];
const forked = await until('"forked into" on the turn', () => {
  const alert = row()?.findAll((n) => n.props.role === 'alert')[0];
  if (alert) fail(`the fork failed: ${text(alert)}`);
  return /forked into (.+)/.exec(text(row() ?? { children: [] }))?.[1];
});
console.log(`the README React example forked "${source.title}" into "${forked}"`);

// The hook acknowledged the child once it saw it: the server holds the operation acknowledged.
const ACKED = `query($ws: ID!, $s: ID!, $t: ID!) { forkOperations(workspaceId: $ws, first: 20, filter: { sourceSessionId: $s, throughTurnId: $t }) { edges { node { localId acknowledgedAt session { title } } } } }`;
let acked = null;
while (!acked) {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: ACKED, variables: { ws: 'demo', s: source.localId, t: source.latestTurn.localId } }) });
  const body = await r.json();
  if (body.errors) fail(`reading the operations: ${JSON.stringify(body.errors)}`);
  acked = body.data.forkOperations.edges.map((e) => e.node).find((op) => op.session?.title === forked && op.acknowledgedAt);
  if (Date.now() > deadline) fail(`the fork into "${forked}" was not acknowledged`);
  if (!acked) await new Promise((res) => setTimeout(res, 50));
}
await until('the status line to show the stream\'s last change', () => root().findAll((n) => n.props.role === 'status' && /last change: \w+/.test(text(n))).length > 0);
console.log(`acknowledged: true (operation ${acked.localId})`);
act(() => renderer.unmount());
probe.close();
process.exit(0);
