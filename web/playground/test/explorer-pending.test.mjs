// A turn with a pending fork operation (Turn.pendingForkOperation) shows that operation instead
// of a "Fork through this turn" button that would silently return it: a running fork's phase, a
// committed-unacknowledged fork's "Acknowledge", an unknown delivery's "Reconcile" and "Abandon".
// Against the real server, with sessions whose simulated provider scripts each outcome.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, gql, launch, screenshot, seedSession } from './harness.mjs';

const TIMEOUT = 20_000;

let browser;
before(async () => {
  browser = await launch();
  await browser.page.goto(`${BASE}/#/explorer?workspace=demo`);
  await browser.page.locator('[data-live="live"]').waitFor({ timeout: TIMEOUT });
});
after(async () => {
  if (!browser) return;
  await browser.close();
  assert.deepEqual(browser.blocked, [], 'the page tried to reach outside 127.0.0.1');
  assert.deepEqual(browser.pageErrors, [], 'uncaught errors in the page');
});

const turnOf = (page, turnId) => page.locator(`li.turn[data-turn-id="${turnId}"]`);
const pendingOf = (page, turnId, phase) =>
  turnOf(page, turnId).locator(phase ? `.pending-operation[data-pending-phase="${phase}"]` : '.pending-operation');

const OPERATION = `query($id: ID!) { forkOperation(workspaceId: "demo", id: $id) {
  id status phase error errorReason reconcileAttempts lastReconciledAt nextReconcileAt acknowledgedAt targetSessionId } }`;
const readOperation = async (id) => (await gql(OPERATION, { id })).forkOperation;

// A session reported by another client arrives live; select it with a click.
async function select(page, id) {
  const node = page.locator(`g.node[data-session-id="${id}"]`);
  await node.waitFor({ timeout: TIMEOUT });
  await node.click();
  await page.locator(`.session-panel[data-session-id="${id}"]`).waitFor({ timeout: TIMEOUT });
}

// Clicks "Fork through this turn" and returns the id of the operation the turn then shows.
async function forkFromTheTurn(page, turnId, phase) {
  await turnOf(page, turnId).locator('button.fork-button:enabled').click();
  const pending = pendingOf(page, turnId, phase);
  await pending.waitFor({ timeout: TIMEOUT });
  return pending.getAttribute('data-operation-id');
}

// The attempt count the turn shows now; Infinity once it shows no pending operation (no waiting).
const attemptsShown = (page, turnId) => page.evaluate((id) => {
  const pending = document.querySelector(`li.turn[data-turn-id="${id}"] .pending-operation`);
  return pending ? Number(pending.dataset.reconcileAttempts) : Infinity;
}, turnId);

// Waits until the turn's attempt count passes `before`, or its pending operation is gone.
async function attemptsPass(page, turnId, before) {
  await page.waitForFunction(([id, n]) => {
    const pending = document.querySelector(`li.turn[data-turn-id="${id}"] .pending-operation`);
    return !pending || Number(pending.dataset.reconcileAttempts) > n;
  }, [turnId, before], { timeout: TIMEOUT });
}

// Clicks "Reconcile now" until the turn no longer shows the unknown operation. The server also
// reconciles by itself on a schedule, so the operation may be resolved between two clicks; that
// is why each round waits for a condition rather than for one answer. Returns the answers the
// page's own reconcile requests got.
async function reconcileUntilResolved(page, turnId) {
  const answers = [];
  const unknown = pendingOf(page, turnId, 'DELIVERY_UNKNOWN');
  for (let round = 0; round < 10 && (await unknown.count()) > 0; round++) {
    const before = await attemptsShown(page, turnId);
    const answered = page.waitForResponse((r) => (r.request().postData() || '').includes('ReconcileForkOperation'), { timeout: TIMEOUT });
    const clicked = await unknown.locator('button.reconcile-button:enabled').click({ timeout: 3000 }).then(() => true, () => false);
    if (clicked) answers.push((await (await answered).json()).data.reconcileForkOperation);
    else answered.catch(() => {});
    await attemptsPass(page, turnId, before);
  }
  return answers;
}

// Text under `selector` whose contrast with its background is below WCAG AA (4.5:1).
async function lowContrast(page, selector) {
  return page.evaluate((sel) => {
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
    let checked = 0;
    for (const el of document.querySelectorAll(`${sel}, ${sel} *`)) {
      if (el.closest(':disabled')) continue;
      const hasText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
      if (!hasText || !el.getClientRects().length) continue;
      checked++;
      const fg = lum(rgb(getComputedStyle(el).color));
      const bg = lum(background(el));
      const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
      if (ratio < 4.5) out.push(`${el.tagName}.${el.className}: "${el.textContent.trim().slice(0, 30)}" ${ratio.toFixed(2)}`);
    }
    return { checked, failures: out };
  }, selector);
}

describe('pending fork operations on a turn', () => {
  test('an unknown delivery shows Reconcile (attempts move) and Abandon (with a reason); then the fork button is back', async () => {
    const { page } = browser;
    const source = await seedSession({
      title: 'Pending: answer never found', turns: 2,
      settings: { simulated: { fork: 'unknown', reconcile: 'unknown', error: 'answer lost in transit' } },
    });
    await select(page, source.id);
    const turnId = source.turnIds[0];
    const opId = await forkFromTheTurn(page, turnId, 'DELIVERY_UNKNOWN');
    const pending = pendingOf(page, turnId, 'DELIVERY_UNKNOWN');
    assert.equal(await turnOf(page, turnId).locator('button.fork-button').count(), 0, 'no fork button while the delivery is unknown');
    assert.match(await pending.textContent(), /DELIVERY UNKNOWN/);
    assert.equal(await pending.locator('button.reconcile-button').isEnabled(), true);
    assert.equal(await pending.locator('button.abandon-button').isEnabled(), true);
    // The other turn is not blocked by this operation.
    await turnOf(page, source.turnIds[1]).locator('button.fork-button:enabled').waitFor({ timeout: TIMEOUT });
    await turnOf(page, turnId).scrollIntoViewIfNeeded();
    await screenshot(page, 'pending-unknown');
    // At 420 px the same block fits: both buttons inside the viewport, nothing scrolls sideways.
    await page.setViewportSize({ width: 420, height: 800 });
    await pending.locator('button.abandon-button').scrollIntoViewIfNeeded();
    for (const button of ['button.reconcile-button', 'button.abandon-button']) {
      const box = await pending.locator(button).boundingBox();
      assert.ok(box.x >= 0 && box.x + box.width <= 420, `${button} is inside 420px (${box.x}+${box.width})`);
    }
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1));
    await screenshot(page, 'pending-unknown-420');
    await page.setViewportSize({ width: 1280, height: 800 });

    // Reconcile: the page asks, the attempt count moves to (at least) what the server answered.
    const before = await attemptsShown(page, turnId);
    const answered = page.waitForResponse((r) => (r.request().postData() || '').includes('ReconcileForkOperation'), { timeout: TIMEOUT });
    await pending.locator('button.reconcile-button').click();
    const answer = (await (await answered).json()).data.reconcileForkOperation;
    assert.equal(answer.phase, 'DELIVERY_UNKNOWN', 'the provider still cannot tell');
    assert.ok(answer.reconcileAttempts > before, `the attempt was counted (${before} → ${answer.reconcileAttempts})`);
    await page.waitForFunction(([id, n]) => {
      const p = document.querySelector(`li.turn[data-turn-id="${id}"] .pending-operation`);
      return p && Number(p.dataset.reconcileAttempts) >= n;
    }, [turnId, answer.reconcileAttempts], { timeout: TIMEOUT });
    const shown = await attemptsShown(page, turnId);
    assert.match(await pending.locator('.reconcile-attempts').textContent(), new RegExp(`^${shown} attempts?$`));
    assert.match(await pending.locator('.reconcile-status').textContent(), /last at .*next automatic attempt (in \d+ s|now)/s);
    const server = await readOperation(opId);
    assert.equal(server.phase, 'DELIVERY_UNKNOWN');
    assert.ok(server.reconcileAttempts >= answer.reconcileAttempts && server.lastReconciledAt && server.nextReconcileAt);
    await turnOf(page, turnId).scrollIntoViewIfNeeded();
    await screenshot(page, 'pending-reconciled-still-unknown');

    // Abandon asks for a reason; without one it cannot be confirmed.
    await pending.locator('button.abandon-button').click();
    const form = pending.locator('form.abandon-form');
    await form.waitFor({ timeout: TIMEOUT });
    assert.equal(await form.locator('button.abandon-confirm').isDisabled(), true, 'no abandon without a reason');
    assert.match(await form.textContent(), /orphaned/);
    const reason = 'the provider team says the request never arrived';
    await form.locator('input.abandon-reason').fill(reason);
    await turnOf(page, turnId).scrollIntoViewIfNeeded();
    await screenshot(page, 'pending-abandon-form');
    const contrast = await lowContrast(page, `li.turn[data-turn-id="${turnId}"] .pending-operation`);
    assert.ok(contrast.checked >= 6, `checked ${contrast.checked} texts of the pending block and its form`);
    assert.deepEqual(contrast.failures, [], 'the pending block keeps WCAG AA contrast');
    await form.locator('button.abandon-confirm').click();

    await turnOf(page, turnId).locator('button.fork-button:enabled').waitFor({ timeout: TIMEOUT });
    assert.equal(await pendingOf(page, turnId).count(), 0, 'the abandoned operation no longer stands on the turn');
    const abandoned = await readOperation(opId);
    assert.deepEqual([abandoned.status, abandoned.errorReason, abandoned.error], ['FAILED', 'abandoned', reason]);
    const activity = page.locator(`li.operation[data-operation-id="${opId}"]`);
    await activity.locator('.operation-error', { hasText: reason }).waitFor({ timeout: TIMEOUT });
    assert.equal(await activity.getAttribute('data-phase'), 'FAILED');
    assert.match(await activity.textContent(), /abandoned/);
    await turnOf(page, turnId).scrollIntoViewIfNeeded();
    await screenshot(page, 'pending-abandoned');

    // The button really forks again: a new operation, not the old one returned.
    const again = await forkFromTheTurn(page, turnId, 'DELIVERY_UNKNOWN');
    assert.notEqual(again, opId, 'a new fork request made a new operation');
    await gql(`mutation($id: ID!) { abandonForkOperation(workspaceId: "demo", id: $id, reason: "test clean-up") { id } }`, { id: again });
    await turnOf(page, turnId).locator('button.fork-button:enabled').waitFor({ timeout: TIMEOUT });
  });

  test('a reconcile that finds no child ends FAILED (reconciled_absent) and gives the turn back', async () => {
    const { page } = browser;
    const source = await seedSession({
      title: 'Pending: the provider has no child', turns: 1,
      settings: { simulated: { fork: 'unknown', reconcile: 'absent', reconcileAfter: 1 } },
    });
    await select(page, source.id);
    const turnId = source.turnIds[0];
    const opId = await forkFromTheTurn(page, turnId, 'DELIVERY_UNKNOWN');
    const answers = await reconcileUntilResolved(page, turnId);
    assert.ok(answers.length >= 1, 'the page asked at least once');

    await turnOf(page, turnId).locator('button.fork-button:enabled').waitFor({ timeout: TIMEOUT });
    const op = await readOperation(opId);
    assert.deepEqual([op.status, op.errorReason, op.reconcileAttempts], ['FAILED', 'reconciled_absent', 2]);
    const activity = page.locator(`li.operation[data-operation-id="${opId}"][data-phase="FAILED"]`);
    await activity.waitFor({ timeout: TIMEOUT });
    assert.match(await activity.textContent(), /the provider has no such child/);
    await turnOf(page, turnId).scrollIntoViewIfNeeded();
    await screenshot(page, 'pending-reconciled-absent');
  });

  test('an unknown fork started here that reconciliation finds is committed, acknowledged and drawn', async () => {
    const { page } = browser;
    const source = await seedSession({
      title: 'Pending: found on the second ask', turns: 1,
      settings: { simulated: { fork: 'unknown', reconcileAfter: 1 } },
    });
    await select(page, source.id);
    const turnId = source.turnIds[0];
    const opId = await forkFromTheTurn(page, turnId, 'DELIVERY_UNKNOWN');
    await reconcileUntilResolved(page, turnId);

    // Ours, so the explorer acknowledges it once the new session is in its graph.
    await turnOf(page, turnId).locator('button.fork-button:enabled').waitFor({ timeout: TIMEOUT });
    await page.locator(`li.operation[data-operation-id="${opId}"][data-phase="COMMITTED"][data-acknowledged="true"]`).waitFor({ timeout: TIMEOUT });
    const op = await readOperation(opId);
    assert.equal(op.status, 'COMMITTED');
    assert.equal(op.reconcileAttempts, 2, 'found on the second attempt');
    assert.ok(op.acknowledgedAt, 'acknowledged by the explorer');
    await page.locator(`g.node[data-session-id="${op.targetSessionId}"][data-node-kind="fork"]`).waitFor({ timeout: TIMEOUT });
    await page.locator(`g.edge[data-edge="${source.id}->${op.targetSessionId}"]`).waitFor({ timeout: TIMEOUT });
  });

  test('a fork another client runs shows its phase, then Acknowledge until acknowledged', async () => {
    const { page } = browser;
    const source = await seedSession({ title: 'Pending: forked elsewhere', turns: 2, settings: { simulated: { latencyMs: 1500 } } });
    await select(page, source.id);
    const turnId = source.turnIds[1];
    const started = await gql(
      `mutation($input: ForkSessionInput!) { forkSession(input: $input) { localId } }`,
      { input: { workspaceId: 'demo', sourceSessionId: source.id, throughTurnId: turnId, requestId: `elsewhere-${source.id}` } },
    );
    const opId = started.forkSession.localId; // the explorer names operations by their local id

    // While it runs, the turn shows the phase, not a fork button.
    const running = turnOf(page, turnId).locator(`.pending-operation.pending-accepted[data-operation-id="${opId}"]`);
    await running.waitFor({ timeout: TIMEOUT });
    assert.match(await running.getAttribute('data-pending-phase'), /^(FROZEN|DISPATCHING|MATERIALIZING)$/);
    assert.match(await running.textContent(), /Fork in progress/);
    assert.equal(await turnOf(page, turnId).locator('button.fork-button').count(), 0);
    await turnOf(page, turnId).scrollIntoViewIfNeeded();
    await screenshot(page, 'pending-running');

    // Committed by the other client and not acknowledged: the turn offers Acknowledge.
    const committed = pendingOf(page, turnId, 'COMMITTED');
    await committed.locator('button.acknowledge-button:enabled').waitFor({ timeout: TIMEOUT });
    const op = await readOperation(opId);
    assert.equal(op.status, 'COMMITTED');
    assert.equal(op.acknowledgedAt, null, 'the explorer does not acknowledge a fork it did not start');
    assert.match(await committed.textContent(), /not acknowledged yet/);
    await page.locator(`g.node[data-session-id="${op.targetSessionId}"]`).waitFor({ timeout: TIMEOUT });
    // The barrier holds until then: a new request through the turn returns this operation.
    const replay = await gql(
      `mutation($input: ForkSessionInput!) { forkSession(input: $input) { localId } }`,
      { input: { workspaceId: 'demo', sourceSessionId: source.id, throughTurnId: turnId, requestId: `elsewhere-2-${source.id}` } },
    );
    assert.equal(replay.forkSession.localId, opId);
    await turnOf(page, turnId).scrollIntoViewIfNeeded();
    await screenshot(page, 'pending-committed');
    assert.deepEqual((await lowContrast(page, `li.turn[data-turn-id="${turnId}"] .pending-operation`)).failures, []);

    await committed.locator('button.acknowledge-button').click();
    await turnOf(page, turnId).locator('button.fork-button:enabled').waitFor({ timeout: TIMEOUT });
    assert.ok((await readOperation(opId)).acknowledgedAt, 'the click acknowledged it on the server');
  });
});
