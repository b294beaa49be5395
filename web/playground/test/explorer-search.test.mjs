// Finding a session in a big workspace (issue 27, item 13), against the real server: a workspace
// of 10,000 sessions, the explorer's honest counts, a search by a title word and by what was
// said, a session beyond the first 5,000 opened from a search and from the list scrolled to its
// end, with the list drawing only the rows in view the whole time.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, gql, launch, screenshot } from './harness.mjs';

const TIMEOUT = 30_000;
const WORKSPACE = `search-${process.pid}`;
const SESSIONS = 10_000;
const PER_REQUEST = 20; // the root field limit
const ZEBRA = 9_501; // the one session with "zebra" in its title
const WALRUS = 7_321; // the one session that says "walrus"

const id = (i) => `s${String(i).padStart(5, '0')}`;
const title = (i) => (i === ZEBRA ? `Quarterly zebra review ${i}` : `Workspace session ${i}${i % 100 === 0 ? ' lighthouse' : ''}`);

// post sends one GraphQL request, waiting out the server's rate limit (429 with Retry-After).
async function post(query, variables = {}) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const res = await fetch(`${BASE}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    if (res.status === 429) {
      await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') || 1)));
      continue;
    }
    const body = await res.json();
    if (body.errors) throw new Error(`GraphQL errors: ${JSON.stringify(body.errors)}`);
    return body.data;
  }
  throw new Error('still rate limited after 50 tries');
}

// seed reports the sessions PER_REQUEST to a request (aliases of reportSession), in order, so
// list order is index order.
async function seed() {
  for (let start = 0; start < SESSIONS; start += PER_REQUEST) {
    const fields = [];
    for (let i = start; i < Math.min(SESSIONS, start + PER_REQUEST); i++) {
      fields.push(`r${i}: reportSession(input: {workspaceId: "${WORKSPACE}", id: "${id(i)}", provider: "simulated", providerSessionId: "prov-${WORKSPACE}-${i}", title: "${title(i)}"}) { id }`);
    }
    await post(`mutation { ${fields.join(' ')} }`);
  }
  const turn = `${id(WALRUS)}-t1`;
  await gql(`mutation($input: ReportTurnInput!) { reportTurn(input: $input) { id } }`, {
    input: { workspaceId: WORKSPACE, sessionId: id(WALRUS), id: turn, phase: 'SETTLED', outcome: 'COMPLETED', providerTurnId: `prov-${turn}`, providerTurnBinding: { turn: 1 } },
  });
  await gql(`mutation($input: AppendMessagesInput!) { appendMessages(input: $input) { id } }`, {
    input: { workspaceId: WORKSPACE, sessionId: id(WALRUS), turnId: turn, messages: [{ role: 'USER', content: 'Did the Walrus protocol ship?' }] },
  });
}

let browser;
before(async () => {
  browser = await launch({ width: 1440, height: 900 });
  await seed();
  const data = await gql(`query($ws: ID!) { sessions(workspaceId: $ws, first: 0) { totalCount } }`, { ws: WORKSPACE });
  assert.equal(data.sessions.totalCount, SESSIONS);
}, { timeout: 300_000 });
after(async () => {
  if (!browser) return;
  await browser.close();
  assert.deepEqual(browser.blocked, [], 'the page tried to reach outside 127.0.0.1');
  assert.deepEqual(browser.pageErrors, [], 'uncaught errors in the page');
});

const count = (page) => page.locator('.session-list-count');

async function awaitCount(page, text) {
  await page.waitForFunction((want) => document.querySelector('.session-list-count')?.textContent === want, text, { timeout: TIMEOUT });
}

async function search(page, text) {
  await page.fill('#session-search-input', text);
  await page.waitForFunction((want) => document.querySelector('.session-list-count')?.dataset.search === want
    && document.querySelector('.session-list-count')?.dataset.total !== '', text, { timeout: TIMEOUT });
}

async function openRow(page, sessionId) {
  await page.locator(`.session-row[data-session-id="${sessionId}"]`).click();
  await page.locator(`.session-panel[data-session-id="${sessionId}"]`).waitFor({ timeout: TIMEOUT });
}

describe('finding a session among 10,000', () => {
  test('the counts say how much is loaded of how many', async () => {
    const { page } = browser;
    await page.goto(`${BASE}/#/explorer?workspace=${WORKSPACE}`);
    await page.locator('[data-live="live"]').waitFor({ timeout: TIMEOUT });
    await page.waitForFunction(() => document.querySelector('.session-count')?.dataset.total === '10000', null, { timeout: TIMEOUT });
    assert.equal(await page.locator('.session-count').textContent(), '1,000 of 10,000 sessions in the graph; find the others in the list');
    await awaitCount(page, '200 of 10,000 sessions');
    assert.ok(await page.locator('.session-row').count() < 40, 'the list draws the rows in view, not the 200 loaded');
    await screenshot(page, 'explorer-search-10k');
  });

  test('a title word finds a session beyond the first 5,000, and it opens', async () => {
    const { page } = browser;
    await search(page, 'ZEBRA');
    assert.equal(await count(page).textContent(), '1 session matches “ZEBRA”');
    await openRow(page, id(ZEBRA));
    assert.match(await page.locator('.session-panel').textContent(), /Quarterly zebra review/);
    await search(page, 'lighthouse');
    await awaitCount(page, '100 sessions match “lighthouse”');
    await search(page, 'walrus');
    await awaitCount(page, '1 session matches “walrus”');
    await openRow(page, id(WALRUS));
    await search(page, 'walrus absent');
    await awaitCount(page, '0 sessions match “walrus absent”');
    await screenshot(page, 'explorer-search-none');
  });

  test('the whole list is reached by scrolling, a page at a time, and its last session opens', async () => {
    const { page } = browser;
    await search(page, '');
    await awaitCount(page, '200 of 10,000 sessions');
    const started = Date.now();
    let drawnMax = 0;
    for (let step = 0; step < SESSIONS / 200 + 5; step++) {
      const state = await page.evaluate(() => {
        const box = document.querySelector('.session-list-scroll');
        box.scrollTop = box.scrollHeight;
        box.dispatchEvent(new Event('scroll'));
        return { loaded: Number(document.querySelector('.session-list-count').dataset.loaded), drawn: document.querySelectorAll('.session-row').length };
      });
      drawnMax = Math.max(drawnMax, state.drawn);
      if (state.loaded >= 10_000) break;
      // The scroll to the end reads the next page: await it before scrolling on.
      await page.waitForFunction((before) => Number(document.querySelector('.session-list-count').dataset.loaded) > before,
        state.loaded, { timeout: TIMEOUT });
    }
    await awaitCount(page, '10,000 sessions');
    assert.ok(drawnMax < 40, `the list never drew more than the rows in view (${drawnMax})`);
    const last = page.locator(`.session-row[data-session-id="${id(SESSIONS - 1)}"]`);
    await last.waitFor({ timeout: TIMEOUT });
    assert.equal(await last.getAttribute('data-index'), String(SESSIONS - 1));
    await openRow(page, id(SESSIONS - 1));
    // The session opened from beyond the graph's pages joins the graph.
    await page.locator(`g.node[data-session-id="${id(SESSIONS - 1)}"]`).waitFor({ timeout: TIMEOUT });
    console.log(`scrolled through 10,000 sessions in ${Date.now() - started} ms`);
    await screenshot(page, 'explorer-search-end');
  });
});
