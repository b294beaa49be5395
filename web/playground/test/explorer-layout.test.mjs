// The explorer's graph at 1280 and 420 px against the real server: every fork's full title can be
// read (on the node, and in its tooltip), each node says truthfully what it is (a fork of which
// session, a sub-agent, an original), no edge runs through a "turn N" label, no text leaves its
// node, and at 420 px nothing is cut off or scrolls sideways.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, gql, launch, screenshot, seedSession } from './harness.mjs';

const TIMEOUT = 20_000;

let browser;
let created = [];
let mayCut = new Set(); // sessions whose titles need more than two lines
before(async () => {
  browser = await launch();
  // A family like the one that confused a visitor: forks numbered "(2)", "(3)", … of one long
  // title, a fork of a fork, plus a sub-agent (CHILD) session and a title too long for two lines.
  const root = await seedSession({ title: 'Plan a long weekend in Lisbon for two', turns: 3 });
  const a = await forkAndAcknowledge(root.id, root.turnIds[1]);
  const b = await forkAndAcknowledge(root.id, root.turnIds[2]);
  const c = await forkAndAcknowledge(b.targetSessionId, b.targetTurnId);
  const long = await seedSession({ title: 'An exceptionally long session title that cannot possibly fit into two lines of a node, not even in the wide nodes of a phone', turns: 1 });
  const longFork = await forkAndAcknowledge(long.id, long.turnIds[0]);
  const child = `${root.id}-subagent`;
  await gql(
    `mutation($input: ReportSessionInput!) { reportSession(input: $input) { id } }`,
    { input: { workspaceId: 'demo', id: child, kind: 'CHILD', provider: 'simulated', providerSessionId: `prov-${child}`, title: 'Sub-agent: search flights' } },
  );
  created = [root.id, a.targetSessionId, b.targetSessionId, c.targetSessionId, long.id, longFork.targetSessionId, child];
  mayCut = new Set([long.id, longFork.targetSessionId]);
});
after(async () => {
  if (!browser) return;
  await browser.close();
  assert.deepEqual(browser.blocked, [], 'the page tried to reach outside 127.0.0.1');
  assert.deepEqual(browser.pageErrors, [], 'uncaught errors in the page');
});

// forkAndAcknowledge forks over GraphQL, as another client would, follows the operation over
// server-sent events until it ends, and acknowledges the commit.
async function forkAndAcknowledge(sourceSessionId, throughTurnId) {
  const requestId = `layout-${sourceSessionId}-${throughTurnId}`;
  const started = await gql(
    `mutation($input: ForkSessionInput!) { forkSession(input: $input) { id } }`,
    { input: { workspaceId: 'demo', sourceSessionId, throughTurnId, requestId } },
  );
  const id = started.forkSession.id;
  const op = await followOperation(id);
  assert.equal(op.phase, 'COMMITTED', `fork ${id} ended ${op.phase}`);
  await gql(`mutation($id: ID!) { acknowledgeForkOperation(workspaceId: "demo", id: $id) { id } }`, { id });
  return op;
}

// followOperation reads forkOperationUpdated over SSE until a terminal phase (or TIMEOUT).
async function followOperation(id) {
  const res = await fetch(`${BASE}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({
      query: `subscription($id: ID!) { forkOperationUpdated(workspaceId: "demo", id: $id) { phase targetSessionId targetTurnId } }`,
      variables: { id },
    }),
    signal: AbortSignal.timeout(TIMEOUT),
  });
  assert.equal(res.status, 200);
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      const payload = line.startsWith('data:') ? line.slice(5).trim() : '';
      if (!payload) continue; // event names, keep-alives, the empty data of "complete"
      const message = JSON.parse(payload);
      const op = message.data && message.data.forkOperationUpdated;
      if (op && ['COMMITTED', 'FAILED', 'DELIVERY_UNKNOWN'].includes(op.phase)) {
        await res.body.cancel().catch(() => {});
        return op;
      }
    }
  }
  throw new Error(`the stream of operation ${id} ended before a terminal phase`);
}

async function allSessions() {
  const out = [];
  let after = null;
  for (;;) {
    const data = await gql(
      `query($after: String) { sessions(workspaceId: "demo", first: 200, after: $after) {
        edges { node { id: localId title kind forkedFrom { sourceSessionId sourceSession { title } } } } pageInfo { hasNextPage endCursor } } }`,
      { after },
    );
    out.push(...data.sessions.edges.map((e) => e.node));
    if (!data.sessions.pageInfo.hasNextPage) return out;
    after = data.sessions.pageInfo.endCursor;
  }
}

// What each node shows: the visible title (its lines joined), the kind line, the tooltip, its
// box in the viewport, and whether any of its text runs past its own rectangle.
async function readNodes(page) {
  return page.evaluate(() => [...document.querySelectorAll('g.node')].map((g) => {
    const rect = g.querySelector('rect');
    const width = rect.width.baseVal.value;
    const texts = [...g.querySelectorAll('text')];
    const overflow = texts.some((t) => {
      const b = t.getBBox();
      return b.x < 0 || b.x + b.width > width + 0.5;
    });
    const box = g.getBoundingClientRect();
    return {
      id: g.dataset.sessionId,
      kind: g.dataset.nodeKind,
      title: [...g.querySelectorAll('.node-title tspan')].map((t) => t.textContent).join(' '),
      meta: g.querySelector('.node-meta').textContent,
      tooltip: g.querySelector('title').textContent,
      label: g.getAttribute('aria-label'),
      overflow,
      left: box.left,
      right: box.right,
    };
  }));
}

// Samples every edge path every 2px and reports each point inside some edge label's box.
async function edgesThroughLabels(page) {
  return page.evaluate(() => {
    const labels = [...document.querySelectorAll('g.edge')].map((g) => {
      const r = g.querySelector('rect');
      return { edge: g.dataset.edge, x: r.x.baseVal.value, y: r.y.baseVal.value, w: r.width.baseVal.value, h: r.height.baseVal.value };
    });
    const hits = [];
    for (const path of document.querySelectorAll('g.edge path')) {
      const length = path.getTotalLength();
      for (let at = 0; at <= length; at += 2) {
        const p = path.getPointAtLength(at);
        for (const l of labels) {
          if (p.x > l.x - 1 && p.x < l.x + l.w + 1 && p.y > l.y - 1 && p.y < l.y + l.h + 1) {
            hits.push(`${path.parentElement.dataset.edge} crosses the label of ${l.edge} at (${p.x.toFixed(0)}, ${p.y.toFixed(0)})`);
          }
        }
      }
    }
    return { labels: labels.length, hits: [...new Set(hits)] };
  });
}

async function checkGraph(page, width) {
  await page.setViewportSize({ width, height: 900 });
  await page.goto(`${BASE}/#/explorer?workspace=demo`);
  await page.locator('[data-live="live"]').waitFor({ timeout: TIMEOUT });
  for (const id of created) await page.locator(`g.node[data-session-id="${id}"]`).waitFor({ timeout: TIMEOUT });
  const sessions = new Map((await allSessions()).map((s) => [s.id, s]));
  const nodes = await readNodes(page);
  assert.equal(nodes.length, sessions.size, 'one node per session');
  let forks = 0;
  const cut = [];
  for (const n of nodes) {
    const s = sessions.get(n.id);
    assert.ok(s, `node ${n.id} is a session of the workspace`);
    const where = `${width}px, "${s.title}" (${s.id})`;
    // The whole title is reachable: in the tooltip always, and visibly unless it needs more than
    // two lines, in which case the visible part still ends with the fork number.
    assert.equal(n.tooltip.split('\n')[0], s.title, `${where}: the tooltip shows the full title`);
    assert.ok(n.label.includes(s.title), `${where}: the accessible name has the full title`);
    const number = / \(\d+\)$/.exec(s.title);
    if (n.title !== s.title) {
      cut.push(s.id);
      assert.ok(s.title.length > 50, `${where}: a title that fits two lines is shown in full, not as "${n.title}"`);
      assert.ok(n.title.endsWith('…' + (number ? number[0] : '')), `${where}: a cut title says so and keeps its number: ${n.title}`);
    }
    if (number) assert.ok(n.title.endsWith(number[0]), `${where}: the fork number is visible`);
    // The kind is told truthfully, and nothing is called "root".
    assert.doesNotMatch(`${n.meta} ${n.tooltip}`, /\broot\b/i, `${where}: no node is labelled root`);
    if (s.forkedFrom) {
      forks++;
      assert.equal(n.kind, 'fork', `${where}: a fork is shown as a fork`);
      const source = s.forkedFrom.sourceSession ? s.forkedFrom.sourceSession.title : s.forkedFrom.sourceSessionId;
      assert.ok(n.tooltip.includes(`fork of ${source} through turn `), `${where}: the tooltip names the source: ${n.tooltip}`);
      assert.ok(n.meta.startsWith('fork of '), `${where}: the node says "fork of": ${n.meta}`);
      assert.ok(`fork of ${source}`.startsWith(n.meta.replace(/…$/, '')), `${where}: the node names its source: ${n.meta}`);
    } else if (s.kind === 'CHILD') {
      assert.equal(n.kind, 'subagent', `${where}`);
      assert.match(n.meta, /^sub-agent session/, `${where}`);
    } else {
      assert.equal(n.kind, 'original', `${where}`);
      assert.match(n.meta, /^original session/, `${where}`);
    }
    assert.equal(n.overflow, false, `${where}: text stays inside its node`);
  }
  assert.ok(forks >= 5, `forks checked: ${forks}`);
  assert.deepEqual(cut.filter((id) => mayCut.has(id)).sort(), [...mayCut].sort(), 'the over-long titles were cut (and checked)');
  const crossings = await edgesThroughLabels(page);
  assert.ok(crossings.labels >= forks, 'each fork has a labelled edge');
  assert.deepEqual(crossings.hits, [], 'no edge runs through a label');
  return nodes;
}

describe('explorer layout', () => {
  test('at 1280 px: a left-to-right tree with full titles, truthful kinds and clear labels', async () => {
    const { page } = browser;
    await checkGraph(page, 1280);
    assert.equal(await page.locator('.graph-scroll').getAttribute('data-layout'), 'tree');
    await screenshot(page, 'explorer-layout-1280');
  });

  test('at 420 px: an outline that fits the width, nothing cut off', async () => {
    const { page } = browser;
    const nodes = await checkGraph(page, 420);
    assert.equal(await page.locator('.graph-scroll').getAttribute('data-layout'), 'outline');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px`);
    for (const n of nodes) assert.ok(n.left >= 0 && n.right <= 420, `node ${n.id} is inside the 420px viewport (${n.left}..${n.right})`);
    // The session panel below the graph is usable at this width too: select a fork and read it.
    const fork = created[3];
    await page.locator(`g.node[data-session-id="${fork}"]`).click();
    const panel = page.locator(`.session-panel[data-session-id="${fork}"]`);
    await panel.waitFor({ timeout: TIMEOUT });
    assert.match(await panel.locator('dd[data-kind]').textContent(), /^fork of .+ \(kind ROOT\)$/);
    await screenshot(page, 'explorer-layout-420');
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
