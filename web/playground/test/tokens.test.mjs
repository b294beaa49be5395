// Against a server started with -tokens: without a token the explorer says why it is empty; with
// the token saved through the UI, HTTP requests and the websocket authenticate and the graph loads.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { TOKEN, TOKEN_BASE, launch, screenshot } from './harness.mjs';

const TIMEOUT = 20_000;
let browser;
before(async () => {
  assert.ok(TOKEN_BASE && TOKEN, 'test-browser.sh starts a server with tokens and passes its URL and token');
  browser = await launch();
});
after(async () => {
  if (!browser) return;
  await browser.close();
  assert.deepEqual(browser.blocked, [], 'the page tried to reach outside 127.0.0.1');
  assert.deepEqual(browser.pageErrors, [], 'uncaught errors in the page');
});

test('with API tokens the explorer reports UNAUTHENTICATED, then works once the token is saved', async () => {
  const { page } = browser;
  await page.goto(`${TOKEN_BASE}/#/explorer?workspace=demo`);
  const banner = page.locator('.banner-error').first();
  await banner.waitFor({ timeout: TIMEOUT });
  assert.match(await banner.textContent(), /UNAUTHENTICATED/);

  await page.getByRole('button', { name: 'API token' }).click();
  await page.getByLabel(/Bearer token/).fill(TOKEN);
  await page.getByRole('button', { name: 'Save' }).click(); // reloads the page
  await page.locator('[data-live="live"]').waitFor({ timeout: TIMEOUT }); // the websocket authenticated
  await page.locator('g.node[data-session-id="lisbon-trip"]').waitFor({ timeout: TIMEOUT });
  assert.equal(await page.getByRole('button', { name: 'API token: set' }).count(), 1);
  await screenshot(page, 'explorer-with-token');
});
