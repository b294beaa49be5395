// Issue 27, items 11 and 12, in real Chromium: the top bar at 420 px and 1440 px (one line,
// nothing outside the 44 px bar), the playground at 1440 px (the whole first example visible in
// the editor, the results pane saying how to get its result), and a fork's transcript with its
// "Continued from" divider after the turn it went through, linking to the source, or saying the
// source conversation is not found once the source is deleted. Screenshots in artifacts/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, gql, launch, screenshot, seedSession } from './harness.mjs';

const TIMEOUT = 20_000;

let browser;
before(async () => {
  browser = await launch({ width: 1440, height: 900 });
});
after(async () => {
  if (!browser) return;
  await browser.close();
  assert.deepEqual(browser.blocked, [], 'the page tried to reach outside 127.0.0.1');
  assert.deepEqual(browser.pageErrors, [], 'uncaught errors in the page');
});

// topBar measures the bar and each of its items: their boxes, and how many lines their text takes.
function topBar(page) {
  return page.evaluate(() => {
    const bar = document.querySelector('.topbar').getBoundingClientRect();
    const items = [...document.querySelectorAll('.topbar .brand, .topbar nav a, .topbar .topbar-button')].map((el) => {
      const r = el.getBoundingClientRect();
      const range = document.createRange();
      range.selectNodeContents(el);
      const tops = new Set([...range.getClientRects()].map((line) => Math.round(line.top)));
      return { text: el.textContent.trim(), top: r.top, bottom: r.bottom, left: r.left, right: r.right, lines: tops.size };
    });
    return { bar: { top: bar.top, bottom: bar.bottom, height: bar.height }, items, width: window.innerWidth, scrollWidth: document.documentElement.scrollWidth };
  });
}

describe('first hour', () => {
  for (const width of [420, 1440]) {
    test(`the top bar at ${width} px: one line, nothing outside the 44 px bar`, async () => {
      const { page } = browser;
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${BASE}/#/explorer?workspace=demo`);
      await page.locator('.topbar-button').waitFor({ timeout: TIMEOUT });
      const m = await topBar(page);
      await screenshot(page, `topbar-${width}`);
      assert.equal(Math.round(m.bar.height), 44, 'the bar is 44 px high');
      assert.ok(m.items.length >= 4, `brand, two views and the token button: ${JSON.stringify(m.items)}`);
      for (const item of m.items) {
        assert.equal(item.lines, 1, `"${item.text}" is on one line at ${width} px`);
        assert.ok(item.top >= m.bar.top && item.bottom <= m.bar.bottom, `"${item.text}" stays inside the bar (${item.top}..${item.bottom})`);
        assert.ok(item.left >= 0 && item.right <= m.width, `"${item.text}" stays inside the ${m.width} px window (${item.left}..${item.right})`);
      }
      assert.ok(m.scrollWidth <= m.width, `nothing scrolls sideways (${m.scrollWidth} > ${m.width})`);
    });
  }

  test('the playground at 1440 px shows the whole first example and says how to run it', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${BASE}/`);
    await page.locator('.graphiql-query-editor .CodeMirror').waitFor({ timeout: TIMEOUT });
    await page.waitForFunction(() => {
      const cm = document.querySelector('.graphiql-query-editor .CodeMirror')?.CodeMirror;
      return cm && cm.getValue().includes('query ListSessions');
    }, null, { timeout: TIMEOUT });
    const editor = await page.evaluate(() => {
      const cm = document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror;
      const info = cm.getScrollInfo();
      return { info, lines: cm.lineCount(), first: cm.getLine(0) };
    });
    const response = await page.evaluate(() => document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror.getValue());
    await screenshot(page, 'playground-1440');
    const { info } = editor;
    assert.equal(info.top, 0, 'the editor opens at the example\'s first line');
    assert.ok(info.height <= info.clientHeight + 1, `all ${editor.lines} lines fit the editor's height (${info.height} > ${info.clientHeight})`);
    assert.ok(info.width <= info.clientWidth + 1, `no line runs past the editor's width (${info.width} > ${info.clientWidth})`);
    assert.match(response, /Press Run/, 'the results pane says what to do before anything ran');
  });

  test("a fork's transcript: Continued from its source after the boundary turn, or the source not found", async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 1440, height: 900 });
    const source = await seedSession({ title: 'Divider source', turns: 3 });
    const started = await gql(
      `mutation($input: ForkSessionInput!) { forkSession(input: $input) { id targetSessionId } }`,
      { input: { workspaceId: 'demo', sourceSessionId: source.id, throughTurnId: source.turnIds[1], requestId: `divider-${source.id}` } },
    );
    const opId = started.forkSession.id;
    const fork = started.forkSession.targetSessionId;
    let lineage = null;
    for (const deadline = Date.now() + TIMEOUT; Date.now() < deadline && !lineage; ) {
      const read = await gql(`query($id: ID!) { forkOperation(workspaceId: "demo", id: $id) { status lineage { targetTurnId } } }`, { id: opId });
      lineage = read.forkOperation.lineage;
      if (!lineage) await new Promise((r) => setTimeout(r, 100)); // the fork commits in the background
    }
    assert.ok(lineage, 'the fork committed');
    await gql(`mutation($id: ID!) { acknowledgeForkOperation(workspaceId: "demo", id: $id) { id } }`, { id: opId });

    const openFork = async () => {
      await page.goto(`${BASE}/#/explorer?workspace=demo`);
      await page.locator(`g.node[data-session-id="${fork}"]`).waitFor({ timeout: TIMEOUT });
      await page.locator(`g.node[data-session-id="${fork}"]`).focus();
      await page.keyboard.press('Enter');
      await page.locator(`.session-panel[data-session-id="${fork}"] li.turn`).first().waitFor({ timeout: TIMEOUT });
    };
    await openFork();
    const order = await page.evaluate(() =>
      [...document.querySelectorAll('.session-panel ol.turns > li')].map((li) => li.dataset.turnId || (li.classList.contains('continued-from') ? 'divider' : '?')),
    );
    assert.deepEqual(order.slice(0, 3), [order[0], lineage.targetTurnId, 'divider'], `the divider follows the fork's boundary turn: ${order}`);
    const divider = page.locator('.session-panel li.continued-from');
    assert.match(await divider.textContent(), /Continued from Divider source after turn 2/);
    await divider.scrollIntoViewIfNeeded(); // the screenshot shows the divider, not the graph above it
    await screenshot(page, 'fork-continued-from');
    await divider.locator('button.link').click();
    await page.locator(`.session-panel[data-session-id="${source.id}"]`).waitFor({ timeout: TIMEOUT });

    // The source deleted: the fork keeps its history, and the divider says the source is gone.
    await gql(`mutation($id: ID!) { deleteSession(workspaceId: "demo", id: $id, purge: false) }`, { id: source.id });
    await openFork();
    assert.match(await page.locator('.session-panel li.continued-from').textContent(), /source conversation not found/);
    assert.equal(await page.locator('.session-panel li.continued-from button').count(), 0, 'no link to a source that is gone');
    await page.locator('.session-panel li.continued-from').scrollIntoViewIfNeeded();
    await screenshot(page, 'fork-source-not-found');
  });
});
