// The session-graph explorer against the real server: forks from the UI (committed and failed,
// and resumed after a reload), live updates from other clients, and resuming the event stream
// from the last cursor.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, gql, launch, screenshot, seedSession, subscriptionPayloads } from './harness.mjs';

const TIMEOUT = 20_000;

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  if (!browser) return;
  await browser.close();
  assert.deepEqual(browser.blocked, [], 'the page tried to reach outside 127.0.0.1');
  assert.deepEqual(browser.pageErrors, [], 'uncaught errors in the page');
});

const node = (page, id) => page.locator(`g.node[data-session-id="${id}"]`);

async function openExplorer(page) {
  await page.goto(`${BASE}/#/explorer?workspace=demo`);
  await page.locator('[data-live="live"]').waitFor({ timeout: TIMEOUT });
  await page.locator('g.node').first().waitFor({ timeout: TIMEOUT });
}

// Selects a session with the keyboard, as a keyboard user would: focus the node, press Enter.
async function selectSession(page, id) {
  await node(page, id).focus();
  await page.keyboard.press('Enter');
  await page.locator(`.session-panel[data-session-id="${id}"]`).waitFor({ timeout: TIMEOUT });
}

async function forkThrough(page, turnId) {
  const button = page.locator(`li.turn[data-turn-id="${turnId}"] button.fork-button`);
  await button.waitFor({ timeout: TIMEOUT });
  assert.equal(await button.isEnabled(), true, 'the fork button of a bound settled turn is enabled');
  await button.click();
}

describe('explorer', () => {
  test('the first load reads workspaceEventCursor, then the snapshot, then subscribes after it', async () => {
    const { page, frames } = browser;
    const operations = [];
    let cursor = null;
    let changed = null;
    // Hold the snapshot's answer back until another client has reported a session the snapshot does
    // not contain; the page subscribes only after the snapshot is in, so only the replay from the
    // cursor read before the snapshot can bring that session in.
    await page.route('**/graphql', async (route) => {
      const body = route.request().postDataJSON() || {};
      const name = (/^\s*query\s+(\w+)/.exec(body.query || '') || [])[1];
      if (name) operations.push(name);
      const response = await route.fetch();
      if (name === 'WorkspaceEventCursor') cursor = (await response.json()).data.workspaceEventCursor;
      if (name === 'ExplorerSessions' && !changed) changed = await seedSession({ title: 'Reported right after the snapshot', turns: 1 });
      await route.fulfill({ response });
    });
    try {
      await page.goto('about:blank');
      const framesBefore = frames.length;
      await page.goto(`${BASE}/#/explorer?workspace=demo`);
      await page.locator('[data-live="live"]').waitFor({ timeout: TIMEOUT });
      assert.ok(changed, 'the snapshot was requested');
      await node(page, changed.id).waitFor({ timeout: TIMEOUT });

      // The snapshot's reads: the token control's viewer and the session list's pages run beside them.
      const explorerReads = operations.filter((name) => name === 'WorkspaceEventCursor' || name === 'ExplorerSessions');
      assert.deepEqual(explorerReads.slice(0, 2), ['WorkspaceEventCursor', 'ExplorerSessions'], 'the cursor is read before the snapshot');
      assert.ok(cursor, 'workspaceEventCursor answered a cursor');
      const subscribe = frames.slice(framesBefore)
        .filter((f) => f.dir === 'sent')
        .map((f) => JSON.parse(f.data))
        .find((m) => m.type === 'subscribe' && m.payload.query.includes('workspaceEvents'));
      assert.equal(subscribe.payload.variables.after, cursor, 'the first subscription resumes after the cursor read before the snapshot');
      const replayed = subscriptionPayloads(frames.slice(framesBefore), 'workspaceEvents').filter((e) => e.sessionId === changed.id);
      assert.ok(replayed.some((e) => e.kind === 'SESSION_UPSERTED'), 'the change came in through the replay');
    } finally {
      await page.unroute('**/graphql');
    }
  });

  test('a fork button click commits, the new node appears and is acknowledged', async () => {
    const { page, frames } = browser;
    const source = await seedSession({ title: 'Explorer fork source', turns: 3, settings: { simulated: { latencyMs: 1000 } } });
    await openExplorer(page);
    await node(page, source.id).waitFor({ timeout: TIMEOUT }); // arrived live or in the snapshot
    await selectSession(page, source.id);
    await screenshot(page, 'explorer-selected');

    await forkThrough(page, source.turnIds[1]);
    await page.locator('li.operation[data-phase="COMMITTED"][data-acknowledged="true"]').waitFor({ timeout: TIMEOUT });
    const opId = await page.locator('li.operation[data-phase="COMMITTED"]').first().getAttribute('data-operation-id');
    const target = await page.locator(`li.operation[data-operation-id="${opId}"]`).getAttribute('data-target-session-id');

    await node(page, target).waitFor({ timeout: TIMEOUT });
    const edge = page.locator(`g.edge[data-edge="${source.id}->${target}"]`);
    assert.equal((await edge.textContent()).trim(), 'turn 2', 'the lineage edge names the turn forked through');

    const phases = subscriptionPayloads(frames, 'forkOperationUpdated').filter((p) => p.localId === opId).map((p) => p.phase);
    assert.ok(phases.includes('DISPATCHING') || phases.includes('MATERIALIZING'), `live phases seen: ${phases}`);
    const server = await gql(`query($id: ID!) { forkOperation(workspaceId: "demo", id: $id) { phase acknowledgedAt session { turns { totalCount } } } }`, { id: opId });
    assert.equal(server.forkOperation.phase, 'COMMITTED');
    assert.ok(server.forkOperation.acknowledgedAt, 'the explorer acknowledged the operation');
    assert.equal(server.forkOperation.session.turns.totalCount, 2);
    await screenshot(page, 'explorer-fork-committed');
  });

  test('a scripted FAILED fork shows its error', async () => {
    const { page } = browser;
    const source = await seedSession({ title: 'Explorer failing fork', turns: 2, settings: { simulated: { fork: 'rejected', error: 'scripted failure' } } });
    await node(page, source.id).waitFor({ timeout: TIMEOUT }); // live, no reload
    await selectSession(page, source.id);
    await forkThrough(page, source.turnIds[0]);
    const failed = page.locator('li.operation[data-phase="FAILED"]').first();
    await failed.waitFor({ timeout: TIMEOUT });
    assert.match(await failed.locator('.operation-error').textContent(), /scripted failure/);
    await screenshot(page, 'explorer-fork-failed');
  });

  test('a fork whose delivery is unknown says so and is not forked again', async () => {
    const { page } = browser;
    // reconcile: unknown keeps it unknown (by default the server's own reconciliation finds it).
    const source = await seedSession({ title: 'Explorer lost answer', turns: 1, settings: { simulated: { fork: 'unknown', reconcile: 'unknown', error: 'answer lost in transit' } } });
    await node(page, source.id).waitFor({ timeout: TIMEOUT });
    await selectSession(page, source.id);
    await forkThrough(page, source.turnIds[0]);
    const unknown = page.locator('li.operation[data-phase="DELIVERY_UNKNOWN"]').first();
    await unknown.waitFor({ timeout: TIMEOUT });
    assert.match(await unknown.locator('.operation-error').textContent(), /Delivery unknown.*answer lost in transit/s);
    assert.equal(await unknown.getAttribute('data-acknowledged'), 'false');
  });

  test('changes by other clients appear live and a paused stream resumes from its cursor', async () => {
    const { page, frames } = browser;
    const live = await seedSession({ title: 'Reported while watching', turns: 1 });
    await node(page, live.id).waitFor({ timeout: TIMEOUT });

    await page.getByRole('button', { name: 'Pause live updates' }).click();
    await page.locator('[data-live="paused"]').waitFor({ timeout: TIMEOUT });
    const cursor = await page.locator('[data-live]').getAttribute('data-cursor');
    assert.ok(cursor, 'events were applied before pausing');
    const missed = await seedSession({ title: 'Reported while paused', turns: 1 });
    assert.equal(await node(page, missed.id).count(), 0, 'a paused explorer does not see new sessions');

    await page.getByRole('button', { name: 'Resume live updates' }).click();
    await node(page, missed.id).waitFor({ timeout: TIMEOUT });
    const resumed = frames
      .filter((f) => f.dir === 'sent')
      .map((f) => JSON.parse(f.data))
      .filter((m) => m.type === 'subscribe' && m.payload.query.includes('workspaceEvents'))
      .at(-1);
    assert.equal(resumed.payload.variables.after, cursor, 'the resubscription passes the last cursor as after');
    await screenshot(page, 'explorer-resumed');
  });

  test('a turn reported by an agent shows up live; its fork button appears once it settles', async () => {
    const { page } = browser;
    const session = await seedSession({ title: 'Agent still working', turns: 1 });
    await node(page, session.id).waitFor({ timeout: TIMEOUT });
    await selectSession(page, session.id);
    const turnId = `${session.id}-t2`;
    const report = (phase, outcome) => gql(
      `mutation($input: ReportTurnInput!) { reportTurn(input: $input) { id } }`,
      { input: { workspaceId: 'demo', sessionId: session.id, id: turnId, phase, outcome, providerTurnId: `prov-${turnId}`, providerTurnBinding: { turn: 2 } } },
    );
    await report('RUNNING');
    const turn = page.locator(`li.turn[data-turn-id="${turnId}"]`);
    await turn.locator('.badge.phase-running').waitFor({ timeout: TIMEOUT });
    assert.equal(await turn.locator('button.fork-button').count(), 0, 'an unsettled turn has no fork button');

    await report('SETTLED', 'COMPLETED');
    await gql(
      `mutation($input: AppendMessagesInput!) { appendMessages(input: $input) { id } }`,
      { input: { workspaceId: 'demo', sessionId: session.id, turnId, messages: [{ role: 'ASSISTANT', content: 'finished while you watched' }] } },
    );
    await turn.locator('.message .content', { hasText: 'finished while you watched' }).waitFor({ timeout: TIMEOUT });
    await turn.locator('button.fork-button:enabled').waitFor({ timeout: TIMEOUT });
  });

  test('a turn longer than a page of messages shows every message, read through messagesConnection', async () => {
    const { page } = browser;
    const session = await seedSession({ title: 'A long turn', turns: 1 });
    const turnId = session.turnIds[0];
    const messages = Array.from({ length: 258 }, (_, i) => ({ role: 'ASSISTANT', content: `long line ${i + 1}` }));
    await gql(
      `mutation($input: AppendMessagesInput!) { appendMessages(input: $input) { id } }`,
      { input: { workspaceId: 'demo', sessionId: session.id, turnId, messages } },
    );
    await node(page, session.id).waitFor({ timeout: TIMEOUT });
    await selectSession(page, session.id);
    const turn = page.locator(`li.turn[data-turn-id="${turnId}"]`);
    await turn.locator('.message .content', { hasText: 'long line 258' }).waitFor({ timeout: TIMEOUT });
    assert.equal(await turn.locator('li.message').count(), 260, 'the two seeded messages and the 258 appended ones');
    assert.equal(await turn.locator('li.message').nth(2).locator('.content').textContent(), 'long line 1');
  });

  test('the fork button is disabled when the provider says the turn cannot be forked', async () => {
    const { page } = browser;
    const session = await seedSession({ title: 'Provider cannot fork', turns: 1, settings: { simulated: { probe: false } } });
    await node(page, session.id).waitFor({ timeout: TIMEOUT });
    await selectSession(page, session.id);
    const turn = page.locator(`li.turn[data-turn-id="${session.turnIds[0]}"]`);
    await turn.locator('button.fork-button:disabled').waitFor({ timeout: TIMEOUT });
    assert.match(await turn.locator('.turn-actions').textContent(), /cannot fork through this turn/);
    const data = await gql(`query($id: ID!) { session(workspaceId: "demo", id: $id) { latestTurn { providerForkBindingAvailable providerForkBindingState } } }`, { id: session.id });
    assert.deepEqual(data.session.latestTurn, { providerForkBindingAvailable: false, providerForkBindingState: 'RECOVERY_REQUIRED' });
  });

  test('a reload mid-fork resumes the fork (same request id, from localStorage) and acknowledges it', async () => {
    const { page } = browser;
    const source = await seedSession({ title: 'Explorer reload mid-fork', turns: 2, settings: { simulated: { latencyMs: 2500 } } });
    await openExplorer(page);
    await node(page, source.id).waitFor({ timeout: TIMEOUT });
    await selectSession(page, source.id);
    await forkThrough(page, source.turnIds[1]);
    const running = page.locator('li.operation[data-phase="DISPATCHING"]').first();
    await running.waitFor({ timeout: TIMEOUT });
    const opId = await running.getAttribute('data-operation-id');
    const stored = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('forkgraph.explorer.fork:')).map((k) => JSON.parse(localStorage.getItem(k))));
    const record = stored.find((r) => r.operationId === opId);
    assert.ok(record, 'the fork is recorded in localStorage');
    assert.equal(record.ack, 'idle');

    await page.reload(); // the provider is still working
    await page.locator('[data-live="live"]').waitFor({ timeout: TIMEOUT });
    // The new page resumes the stored fork: it finishes, is acknowledged, and is ours.
    const done = page.locator(`li.operation[data-operation-id="${opId}"][data-phase="COMMITTED"][data-acknowledged="true"]`);
    await done.waitFor({ timeout: TIMEOUT });
    assert.match(await done.textContent(), /yours/);
    const ops = await gql(`query($s: ID!, $t: ID!) { forkOperations(workspaceId: "demo", filter: { sourceSessionId: $s, throughTurnId: $t }) { totalCount edges { node { requestId acknowledgedAt } } } }`, { s: source.id, t: source.turnIds[1] });
    assert.equal(ops.forkOperations.totalCount, 1, 'one operation: the reload did not fork again');
    assert.equal(ops.forkOperations.edges[0].node.requestId, record.requestId);
    assert.ok(ops.forkOperations.edges[0].node.acknowledgedAt);
    const after = await page.evaluate((key) => JSON.parse(localStorage.getItem(key)), `forkgraph.explorer.fork:${['demo', source.id, source.turnIds[1]].map(encodeURIComponent).join(':')}`);
    assert.equal(after.ack, 'acknowledged');
  });

  test('keyboard reachable: Tab leads from the toolbar into the graph and on to the fork buttons', async () => {
    const { page } = browser;
    await openExplorer(page);
    await page.getByRole('button', { name: 'Pause live updates' }).focus();
    await page.keyboard.press('Tab');
    const first = await page.evaluate(() => document.activeElement.getAttribute('data-session-id'));
    assert.ok(first, 'Tab after the toolbar focuses the first session node');
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement.querySelector('rect')).strokeWidth);
    assert.equal(outline, '3.5px', 'a focused node shows the focus style');
    await page.keyboard.press('Enter');
    await page.locator(`.session-panel[data-session-id="${first}"]`).waitFor({ timeout: TIMEOUT });
    let reached = false;
    // Every node of the graph and every row of the session list in view comes before the panel.
    for (let i = 0; i < 300 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement.classList.contains('fork-button'));
    }
    assert.ok(reached, 'a fork button is reachable with Tab');
  });

  test('text meets WCAG AA contrast (4.5:1) against its background', async () => {
    const { page } = browser;
    const { checked, failures } = await page.evaluate(() => {
      const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
      const lum = ([r, g, b]) => {
        const ch = [r, g, b].map((v) => {
          const x = v / 255;
          return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
      };
      const background = (el) => {
        for (let e = el; e; e = e.parentElement) {
          const c = rgb(getComputedStyle(e).backgroundColor);
          if (c.length === 3 || (c.length === 4 && c[3] > 0)) return c.slice(0, 3);
        }
        return [255, 255, 255];
      };
      const out = [];
      let count = 0;
      for (const el of document.querySelectorAll('.topbar *, .explorer *')) {
        if (el.closest('svg') || el.closest(':disabled')) continue; // SVG uses fill; disabled controls are exempt
        const hasText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
        if (!hasText || !el.getClientRects().length) continue;
        count++;
        const fg = lum(rgb(getComputedStyle(el).color));
        const bg = lum(background(el));
        const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
        if (ratio < 4.5) out.push(`${el.tagName}.${el.className}: "${el.textContent.trim().slice(0, 30)}" ${ratio.toFixed(2)}`);
      }
      return { checked: count, failures: out };
    });
    assert.ok(checked > 20, `checked ${checked} text elements (session panel and fork activity included)`);
    assert.deepEqual(failures, []);
  });

  test('usable at a narrow width', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 420, height: 800 });
    await openExplorer(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px`);
    await screenshot(page, 'explorer-narrow');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  test('a fork with another model: the field defaults to the source\'s model, the child gets the one typed', async () => {
    const { page } = browser;
    const source = await seedSession({ title: 'Explorer fork with another model', turns: 2, settings: { simulated: { models: ['gpt-a', 'gpt-b'] } } });
    await gql(`mutation($input: ReportSessionInput!) { reportSession(input: $input) { id } }`,
      { input: { workspaceId: 'demo', id: source.id, provider: 'simulated', model: 'gpt-a' } });
    await openExplorer(page);
    await node(page, source.id).waitFor({ timeout: TIMEOUT });
    await selectSession(page, source.id);
    const field = page.locator('input#fork-model');
    assert.equal(await field.inputValue(), 'gpt-a', "the source's model by default");
    await field.fill('gpt-b');
    assert.match(await page.locator('#fork-model-help').textContent(), /gpt-b instead of gpt-a/);
    await forkThrough(page, source.turnIds[1]);
    const forks = async () => (await gql(`query($id: ID!) { session(workspaceId: "demo", id: $id) { forks { operationId targetSessionId } } }`, { id: source.id })).session.forks;
    let lineage = [];
    for (let i = 0; i < 100 && lineage.length === 0; i++) {
      lineage = await forks();
      if (lineage.length === 0) await page.waitForTimeout(100);
    }
    assert.equal(lineage.length, 1, 'the fork committed');
    await node(page, lineage[0].targetSessionId).waitFor({ timeout: TIMEOUT });
    const server = await gql(`query($id: ID!) { forkOperation(workspaceId: "demo", id: $id) {
      target { model settings } session { model settings } } }`, { id: lineage[0].operationId });
    assert.equal(server.forkOperation.target.model, 'gpt-b');
    assert.equal(server.forkOperation.session.model, 'gpt-b');
    assert.equal(server.forkOperation.session.settings.model, 'gpt-b');
    assert.deepEqual(server.forkOperation.session.settings.simulated, { models: ['gpt-a', 'gpt-b'] });

    // A model the provider does not offer: the provider refuses the fork, and the explorer says why.
    await field.fill('gpt-z');
    await forkThrough(page, source.turnIds[0]);
    const failed = page.locator('li.operation[data-phase="FAILED"]', { hasText: 'gpt-z' }).first();
    await failed.waitFor({ timeout: TIMEOUT });
    assert.match(await failed.locator('.operation-error').textContent(), /does not offer model "gpt-z"/);
    await screenshot(page, 'explorer-fork-with-model');
  });
});
