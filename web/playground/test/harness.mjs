// Shared set-up of the browser tests: a headless Debian Chromium with a fresh profile, every
// request outside 127.0.0.1 aborted and recorded, a GraphQL client for preparing data over HTTP,
// and the websocket frames the page exchanged (to see subscription traffic).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const BASE = process.env.FORKGRAPH_URL;
if (!BASE) throw new Error('FORKGRAPH_URL is not set: run these tests through web/playground/test-browser.sh');
export const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname;

const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run',
];

/** launch starts Chromium with a fresh user-data-dir and the offline guard installed. */
export async function launch({ width = 1280, height = 800 } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'forkgraph-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width, height },
  });
  const blocked = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || url.protocol === 'blob:' || url.hostname === '127.0.0.1') return route.continue();
    blocked.push(url.href);
    return route.abort('blockedbyclient');
  });
  const page = context.pages()[0] || (await context.newPage());
  const pageErrors = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  const frames = [];
  const sockets = [];
  page.on('websocket', (ws) => {
    sockets.push(ws.url());
    ws.on('framesent', (f) => frames.push({ dir: 'sent', data: String(f.payload) }));
    ws.on('framereceived', (f) => frames.push({ dir: 'received', data: String(f.payload) }));
  });
  return {
    context,
    page,
    blocked,
    pageErrors,
    frames,
    sockets,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** gql runs a GraphQL request against the server and throws on errors. */
export async function gql(query, variables = {}) {
  const res = await fetch(`${BASE}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors) throw new Error(`GraphQL errors: ${JSON.stringify(body.errors)}`);
  return body.data;
}

let counter = 0;

/**
 * seedSession reports a root session of the simulated provider with `turns` settled, bound turns
 * and one user and one assistant message each. settings scripts the simulated provider.
 */
export async function seedSession({ title, turns = 3, settings = {} }) {
  const id = `pw-${process.pid}-${Date.now().toString(36)}-${++counter}`;
  await gql(
    `mutation($input: ReportSessionInput!) { reportSession(input: $input) { id } }`,
    { input: { workspaceId: 'demo', id, provider: 'simulated', providerSessionId: `prov-${id}`, title, settings } },
  );
  const turnIds = [];
  for (let i = 1; i <= turns; i++) {
    const turnId = `${id}-t${i}`;
    turnIds.push(turnId);
    await gql(
      `mutation($input: ReportTurnInput!) { reportTurn(input: $input) { id } }`,
      { input: { workspaceId: 'demo', sessionId: id, id: turnId, phase: 'SETTLED', outcome: 'COMPLETED', providerTurnId: `prov-${turnId}`, providerTurnBinding: { thread: `prov-${id}`, turn: i } } },
    );
    await gql(
      `mutation($input: AppendMessagesInput!) { appendMessages(input: $input) { id } }`,
      { input: { workspaceId: 'demo', sessionId: id, turnId, messages: [
        { role: 'USER', content: `question ${i} of ${title}` },
        { role: 'ASSISTANT', content: `answer ${i} of ${title}` },
      ] } },
    );
  }
  return { id, turnIds };
}

/** screenshot saves a full-page PNG under artifacts/ and returns its path. */
export async function screenshot(page, name) {
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** subscriptionPayloads returns the data of every "next" frame the page received for a field. */
export function subscriptionPayloads(frames, field) {
  return frames
    .filter((f) => f.dir === 'received')
    .map((f) => JSON.parse(f.data))
    .filter((m) => m.type === 'next' && m.payload && m.payload.data && m.payload.data[field])
    .map((m) => m.payload.data[field]);
}

/** TOKEN_BASE is a second server that requires TOKEN (for workspace demo) on every request. */
export const TOKEN_BASE = process.env.FORKGRAPH_TOKEN_URL;
export const TOKEN = process.env.FORKGRAPH_TOKEN;
