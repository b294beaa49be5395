// The explorer's transcript draws a turn's interactions (a pending permission with its PENDING
// badge, an answered question with its answer) and the session's audit messages after the turn
// their afterSequence names; an answer reported while the session is open replaces the badge.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, gql, launch, screenshot, seedSession } from './harness.mjs';

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

const REPORT_INTERACTION = `mutation($input: ReportInteractionInput!) { reportInteraction(input: $input) { id state } }`;

describe('explorer interactions', () => {
  test('a pending permission, an answered question and an audit message are drawn in place', async () => {
    const { page } = browser;
    const { id, turnIds: [first] } = await seedSession({ title: 'Prompts and notices', turns: 1 });
    const permission = { workspaceId: 'demo', sessionId: id, turnId: first, requestId: 'perm-1', kind: 'PERMISSION',
      prompt: { tool: 'shell', command: 'rm -rf build' }, state: 'PENDING' };
    await gql(REPORT_INTERACTION, { input: permission });
    await gql(REPORT_INTERACTION, { input: { workspaceId: 'demo', sessionId: id, turnId: first, requestId: 'q-1',
      kind: 'QUESTION', prompt: { question: 'Which branch?' }, state: 'PENDING' } });
    await gql(REPORT_INTERACTION, { input: { workspaceId: 'demo', sessionId: id, turnId: first, requestId: 'q-1',
      kind: 'QUESTION', prompt: { question: 'Which branch?' }, state: 'ANSWERED', answer: 'release-2' } });
    // Reported after turn 1 and before turn 2 began: the server places it at afterSequence 1.
    const audit = (await gql(`mutation($input: ReportAuditMessageInput!) { reportAuditMessage(input: $input) { id: localId afterSequence } }`,
      { input: { workspaceId: 'demo', sessionId: id, kind: 'model_changed', content: 'Model changed to sim-large' } })).reportAuditMessage;
    assert.equal(audit.afterSequence, 1);
    const second = `${id}-t2`;
    await gql(`mutation($input: ReportTurnInput!) { reportTurn(input: $input) { id } }`, { input: {
      workspaceId: 'demo', sessionId: id, id: second, phase: 'SETTLED', outcome: 'COMPLETED',
      providerTurnId: `prov-${second}`, providerTurnBinding: { thread: `prov-${id}`, turn: 2 } } });

    await page.goto(`${BASE}/#/explorer?workspace=demo`);
    await page.locator('[data-live="live"]').waitFor({ timeout: TIMEOUT });
    const node = page.locator(`g.node[data-session-id="${id}"]`);
    await node.waitFor({ timeout: TIMEOUT });
    await node.focus();
    await page.keyboard.press('Enter');
    const panel = page.locator(`.session-panel[data-session-id="${id}"]`);
    const turn = panel.locator(`li.turn[data-turn-id="${first}"]`);
    await turn.waitFor({ timeout: TIMEOUT });

    const perm = turn.locator('.interaction[data-request-id="perm-1"]');
    await perm.waitFor({ timeout: TIMEOUT });
    assert.equal(await perm.getAttribute('data-kind'), 'PERMISSION');
    assert.match(await perm.locator('.interaction-kind').innerText(), /permission/i);
    assert.equal(await perm.locator('.interaction-state').innerText(), 'PENDING');
    assert.ok(await perm.locator('.interaction-state').isVisible(), 'the PENDING badge is visible');
    assert.equal(await perm.locator('.interaction-prompt').innerText(), 'rm -rf build');
    assert.equal(await perm.locator('.interaction-answer').count(), 0, 'a pending one has no answer');

    const question = turn.locator('.interaction[data-request-id="q-1"]');
    assert.match(await question.locator('.interaction-kind').innerText(), /question/i);
    assert.equal(await question.locator('.interaction-state').innerText(), 'ANSWERED');
    assert.equal(await question.locator('.interaction-prompt').innerText(), 'Which branch?');
    assert.equal(await question.locator('.answer-text').innerText(), 'release-2');
    assert.deepEqual(await turn.locator('.interaction').evaluateAll((els) => els.map((e) => e.dataset.requestId)), ['perm-1', 'q-1'],
      'in the order they were reported');

    // The audit message stands between turn 1 and turn 2.
    const order = await panel.locator('ol.turns > li').evaluateAll((els) =>
      els.map((e) => (e.dataset.turnId ? `turn:${e.dataset.turnId}` : e.dataset.auditId ? `audit:${e.dataset.auditId}` : e.className)));
    assert.deepEqual(order, [`turn:${first}`, `audit:${audit.id}`, `turn:${second}`]);
    const notice = panel.locator(`li.audit-message[data-audit-id="${audit.id}"]`);
    assert.equal(await notice.locator('.audit-kind').innerText(), 'model_changed');
    assert.equal(await notice.locator('.audit-content').innerText(), 'Model changed to sim-large');
    await notice.scrollIntoViewIfNeeded();
    await screenshot(page, 'explorer-interactions');

    // Answered while the session is open: TURN_UPSERTED reloads the turn and the badge changes.
    await gql(REPORT_INTERACTION, { input: { ...permission, state: 'ANSWERED', answer: { allow: true } } });
    await perm.locator('.interaction-state', { hasText: 'ANSWERED' }).waitFor({ timeout: TIMEOUT });
    assert.equal(await perm.locator('.answer-text').innerText(), '{"allow":true}');
  });
});
