// End-to-end tests of the embedded front end in headless Chromium against the real server (see
// test-browser.sh). Each test starts from a fresh browser profile; none may reach past 127.0.0.1.
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
  for (const url of browser.sockets) assert.match(url, /^ws:\/\/127\.0\.0\.1:\d+\/graphql$/);
});

// GraphiQL's editors are CodeMirror 5 instances; their API is the reliable way to type and read.
async function setEditor(page, selector, value) {
  await page.locator(`${selector} .CodeMirror`).first().waitFor({ timeout: TIMEOUT });
  await page.evaluate(([sel, v]) => document.querySelector(`${sel} .CodeMirror`).CodeMirror.setValue(v), [selector, value]);
}

// Waits until GraphiQL's response pane contains every one of the given strings; returns it parsed.
async function waitForResponse(page, needles, description) {
  try {
    const handle = await page.waitForFunction(
      (wanted) => {
        const cm = document.querySelector('.graphiql-response .CodeMirror');
        const text = cm ? cm.CodeMirror.getValue() : '';
        return wanted.every((w) => text.includes(w)) ? text : false;
      },
      needles,
      { timeout: TIMEOUT },
    );
    return JSON.parse(await handle.jsonValue());
  } catch (err) {
    const text = await page.evaluate(() => document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror.getValue());
    throw new Error(`GraphiQL response never showed ${description}; it shows: ${text}`, { cause: err });
  }
}

// Replaces the active tab's operation and runs it. Named operations keep GraphiQL's operation
// picker out of the way.
async function run(page, query) {
  await setEditor(page, '.graphiql-query-editor', query);
  await setEditor(page, '.graphiql-editor-tool', '{}');
  // GraphiQL parses the edited document asynchronously; its tab title shows the operation name
  // once the new operation is the one that will run.
  const name = query.match(/^\s*(?:query|mutation|subscription)\s+(\w+)/)[1];
  await page.locator('.graphiql-tab-active', { hasText: name }).waitFor({ timeout: TIMEOUT });
  await waitForOperation(page, name);
  await page.locator('.graphiql-execute-button').click();
}

// GraphiQL derives the operation to run from the editor asynchronously; it keeps the parsed facts
// on the query editor's CodeMirror instance. Wait until they name the operation we mean to run.
async function waitForOperation(page, name) {
  await page.waitForFunction(
    (wanted) => {
      const cm = document.querySelector('.graphiql-query-editor .CodeMirror');
      return cm && cm.CodeMirror.operationName === wanted;
    },
    name,
    { timeout: TIMEOUT },
  );
}

// Switches GraphiQL to the tab of a named example operation.
async function openTab(page, name) {
  await page.locator('.graphiql-tab', { hasText: name }).click();
  await page.locator('.graphiql-tab-active', { hasText: name }).waitFor({ timeout: TIMEOUT });
  await waitForOperation(page, name);
}

async function execute(page, variables) {
  if (variables) await setEditor(page, '.graphiql-editor-tool', JSON.stringify(variables));
  await page.locator('.graphiql-execute-button').click();
}

describe('playground', () => {
  test('opens with the demo walk-through, which runs as it is: list, fork, follow, acknowledge', async () => {
    const { page } = browser;
    // Without the schema GraphiQL has no autocompletion and no documentation explorer.
    const introspection = page.waitForResponse(
      (r) => r.url().endsWith('/graphql') && (r.request().postData() || '').includes('__schema'),
      { timeout: TIMEOUT },
    );
    await page.goto(`${BASE}/`);
    await page.locator('.graphiql-container').waitFor({ timeout: TIMEOUT });
    const schema = await (await introspection).json();
    assert.equal(schema.errors, undefined, `introspection failed: ${JSON.stringify(schema.errors)}`);
    assert.ok(schema.data.__schema.types.some((t) => t.name === 'ForkOperation'), 'the schema reached GraphiQL');
    const tabs = await page.locator('.graphiql-tab').allTextContents();
    for (const name of ['ListSessions', 'ForkThroughTurn', 'FollowFork', 'Acknowledge', 'WorkspaceEvents']) {
      assert.ok(tabs.some((t) => t.includes(name)), `example tab ${name} among ${tabs}`);
    }
    await screenshot(page, 'playground-start');

    // The first tab runs exactly as a first visit shows it, without switching tabs.
    await page.locator('.graphiql-tab-active', { hasText: 'ListSessions' }).waitFor({ timeout: TIMEOUT });
    await waitForOperation(page, 'ListSessions');
    await execute(page);
    const listed = await waitForResponse(page, ['"totalCount"', '"providerForkBindingAvailable"'], 'the ListSessions result');
    const ids = listed.data.sessions.edges.map((e) => e.node.localId);
    assert.ok(ids.includes('billing-refactor'), `the seeded demo sessions are listed: ${ids}`);
    const session = listed.data.sessions.edges.find((e) => e.node.localId === 'billing-refactor').node;
    assert.equal(session.id, 'Session:demo:billing-refactor', 'id is the global id');

    await openTab(page, 'ForkThroughTurn');
    await execute(page);
    const forked = await waitForResponse(page, ['"forkSession"', '"requestId"'], 'the ForkThroughTurn result');
    const opId = forked.data.forkSession.id;
    assert.equal(forked.data.forkSession.status, 'ACCEPTED');

    await openTab(page, 'FollowFork');
    await execute(page, { workspaceId: 'demo', id: opId });
    const followed = await waitForResponse(page, ['"forkOperationUpdated"', '"phase": "COMMITTED"'], 'the followed fork committing');
    assert.equal(followed.data.forkOperationUpdated.id, opId);

    await openTab(page, 'Acknowledge');
    await execute(page, { workspaceId: 'demo', id: opId });
    const acked = await waitForResponse(page, ['"acknowledgeForkOperation"', '"acknowledgedAt": "'], 'the acknowledgement');
    assert.equal(acked.data.acknowledgeForkOperation.status, 'COMMITTED');
    await screenshot(page, 'playground-acknowledged');
  });

  test('streams a subscription live over graphql-transport-ws', async () => {
    const { page, frames, sockets } = browser;
    // A slow scripted fork so the subscription is running well before the operation commits: 2 s
    // was not enough on a loaded 2-core machine (GraphiQL took longer to open the subscription,
    // which then saw only COMMITTED); the test waits for COMMITTED, so a longer fork costs only
    // its own length.
    const source = await seedSession({ title: 'playground subscription', turns: 2, settings: { simulated: { latencyMs: 6000 } } });
    const started = await gql(
      `mutation($input: ForkSessionInput!) { forkSession(input: $input) { id phase } }`,
      { input: { workspaceId: 'demo', sourceSessionId: source.id, throughTurnId: source.turnIds[1], requestId: `pw-${Date.now()}` } },
    );
    const opId = started.forkSession.id;
    await run(page, `subscription PlaywrightFollow { forkOperationUpdated(workspaceId: "demo", id: "${opId}") { id status phase } }`);
    const last = await waitForResponse(page, ['"phase": "COMMITTED"', opId], 'the COMMITTED update');
    assert.equal(last.data.forkOperationUpdated.phase, 'COMMITTED');
    const phases = subscriptionPayloads(frames, 'forkOperationUpdated').filter((p) => p.id === opId).map((p) => p.phase);
    assert.ok(phases.length >= 2 && phases[0] !== 'COMMITTED', `streamed phases before the commit: ${phases}`);
    assert.equal(phases.at(-1), 'COMMITTED');
    assert.ok(sockets.length >= 1, 'the subscription ran over a websocket');
    await screenshot(page, 'playground-subscription');
  });

  test('a plain query typed into the editor runs', async () => {
    const { page } = browser;
    await run(page, 'query PlaywrightSessions { sessions(workspaceId: "demo", first: 5) { totalCount edges { node { id title } } } }');
    const listed = await waitForResponse(page, ['"totalCount"', '"title"'], 'the sessions query result');
    assert.ok(listed.data.sessions.totalCount >= 3);
  });
});
