// The explorer's transcript draws typed message parts: a tool call (its name and input) and its
// result (its output, marked as an error), and the turn's error, file changes and command.
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

describe('explorer transcript', () => {
  test('a tool call and its result are drawn, with the turn details', async () => {
    const { page } = browser;
    const { id } = await seedSession({ title: 'Typed transcript', turns: 0 });
    const turnId = `${id}-t1`;
    await gql(`mutation($input: ReportTurnInput!) { reportTurn(input: $input) { id } }`, { input: {
      workspaceId: 'demo', sessionId: id, id: turnId, phase: 'SETTLED', outcome: 'FAILED', origin: 'USER_PROMPT',
      providerTurnId: `prov-${turnId}`, providerTurnBinding: { thread: `prov-${id}`, turn: 1 },
      error: { code: 'tests_failed', message: 'one test failed' },
      fileChanges: [{ path: 'main.go', kind: 'MODIFY' }],
      completedCommand: { command: 'go test ./...', exitCode: 1 },
    } });
    await gql(`mutation($input: AppendMessagesInput!) { appendMessages(input: $input) { id } }`, { input: {
      workspaceId: 'demo', sessionId: id, turnId, messages: [
        { role: 'USER', content: 'run the tests' },
        { role: 'ASSISTANT', parts: [{ kind: 'TOOL_CALL', callId: 'call-1', name: 'shell', input: { cmd: 'go test ./...' } }] },
        { role: 'TOOL', parts: [{ kind: 'TOOL_RESULT', callId: 'call-1', output: 'FAIL TestParts', isError: true }] },
      ] } });

    await page.goto(`${BASE}/#/explorer?workspace=demo`);
    await page.locator('[data-live="live"]').waitFor({ timeout: TIMEOUT });
    const node = page.locator(`g.node[data-session-id="${id}"]`);
    await node.waitFor({ timeout: TIMEOUT });
    await node.focus();
    await page.keyboard.press('Enter');
    const turn = page.locator(`.session-panel[data-session-id="${id}"] li.turn[data-turn-id="${turnId}"]`);
    await turn.waitFor({ timeout: TIMEOUT });

    const call = turn.locator('.part-tool-call');
    await call.waitFor({ timeout: TIMEOUT });
    assert.equal(await call.locator('.tool-name').innerText(), 'shell');
    assert.deepEqual(JSON.parse(await call.locator('.tool-input').innerText()), { cmd: 'go test ./...' });
    const result = turn.locator('.part-tool-result');
    assert.equal(await result.getAttribute('data-call-id'), await call.getAttribute('data-call-id'), 'the result is drawn as its call\'s');
    assert.equal(await result.locator('.tool-output').innerText(), 'FAIL TestParts');
    assert.match(await result.getAttribute('class'), /is-error/);
    assert.match(await turn.locator('.turn-error').innerText(), /tests_failed: one test failed/);
    assert.match(await turn.locator('.turn-command').innerText(), /go test \.\/\.\.\. \(exit 1\)/);
    assert.match(await turn.locator('.file-changes').innerText(), /modify\s+main\.go/);
    await screenshot(page, 'explorer-typed-transcript');
  });
});
