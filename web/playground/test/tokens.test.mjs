// Against a server that requires credentials (-tokens, a tokens file with a read-only token, and
// JWTs of test/issuer.mjs): without one the explorer says why it is empty; with a token or a JWT
// saved through the UI, HTTP requests and the websocket authenticate, the token control says who
// the page is signed in as, and the actions the credential's scopes do not allow are disabled,
// with the reason shown and on hover.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { TOKEN, TOKEN_BASE, launch, screenshot } from './harness.mjs';

const TIMEOUT = 20_000;
const READER = process.env.FORKGRAPH_READER_TOKEN;
const ISSUER = process.env.FORKGRAPH_ISSUER;
let browser;
before(async () => {
  assert.ok(TOKEN_BASE && TOKEN && READER && ISSUER, 'test-browser.sh starts a server with credentials and an issuer');
  browser = await launch();
});
after(async () => {
  if (!browser) return;
  await browser.close();
  assert.deepEqual(browser.blocked, [], 'the page tried to reach outside 127.0.0.1');
  assert.deepEqual(browser.pageErrors, [], 'uncaught errors in the page');
});

/** mint asks the test issuer for a JWT. */
async function mint(params) {
  const res = await fetch(`${ISSUER}/mint?${new URLSearchParams(params)}`);
  assert.equal(res.status, 200);
  return res.text();
}

/** signIn saves a credential through the token control and waits for the live explorer. */
async function signIn(page, token) {
  await page.goto('about:blank'); // a fresh page, not the same document with another hash
  await page.goto(`${TOKEN_BASE}/#/explorer?workspace=demo`);
  await page.getByRole('button', { name: /^API token/ }).click();
  await page.getByLabel(/Bearer token/).fill(token);
  await page.getByRole('button', { name: 'Save' }).click(); // reloads the page
  await page.locator('[data-live="live"]').waitFor({ timeout: TIMEOUT }); // the websocket authenticated
  await page.locator('g.node[data-session-id="lisbon-trip"]').waitFor({ timeout: TIMEOUT });
}

/** forkButtonOf selects the demo session and returns its first turn's fork button. */
async function firstForkButton(page) {
  const node = page.locator('g.node[data-session-id="lisbon-trip"]');
  await node.focus();
  await page.keyboard.press('Enter');
  await page.locator('.session-panel[data-session-id="lisbon-trip"]').waitFor({ timeout: TIMEOUT });
  const button = page.locator('li.turn button.fork-button').first();
  await button.waitFor({ timeout: TIMEOUT });
  return button;
}

test('with credentials required the explorer reports UNAUTHENTICATED, then works once a token is saved', async () => {
  const { page } = browser;
  await page.goto('about:blank');
  await page.goto(`${TOKEN_BASE}/#/explorer?workspace=demo`);
  const banner = page.locator('.banner-error').first();
  await banner.waitFor({ timeout: TIMEOUT });
  assert.match(await banner.textContent(), /UNAUTHENTICATED/);

  await signIn(page, TOKEN);
  await page.getByRole('button', { name: /^API token: token-[0-9a-f]{8}$/ }).waitFor({ timeout: TIMEOUT });
  assert.equal(await (await firstForkButton(page)).isEnabled(), true, 'a -tokens token has every scope');
  await screenshot(page, 'explorer-with-token');
});

test('a read-only token sees the fork actions disabled, with the reason', async () => {
  const { page } = browser;
  await signIn(page, READER);
  const button = await firstForkButton(page);
  assert.equal(await button.isDisabled(), true);
  assert.match(await button.getAttribute('title'), /FORK scope/);
  const help = page.locator(`#${await button.getAttribute('aria-describedby')}`);
  assert.match(await help.textContent(), /does not grant the FORK scope/);
  await page.getByRole('button', { name: 'API token: reader' }).click();
  assert.match(await page.locator('.viewer-status').textContent(), /Signed in as reader \(API token\) · scopes READ · workspaces demo/);
  await screenshot(page, 'explorer-read-only-token');
});

test('a JWT signs in: the token control shows who and until when, and its scopes decide the actions', async () => {
  const { page } = browser;
  const forker = await mint({ sub: 'auth0|ada', name: 'ada', scope: 'openid read fork' });
  await page.goto('about:blank');
  await page.goto(`${TOKEN_BASE}/#/explorer?workspace=demo`);
  await page.getByRole('button', { name: /^API token/ }).click();
  await page.getByLabel(/Bearer token/).fill(forker);
  assert.match(await page.locator('[data-jwt-hint]').textContent(), /A JWT for auth0\|ada, expires/);
  await page.getByRole('button', { name: 'Save' }).click();
  await page.locator('[data-live="live"]').waitFor({ timeout: TIMEOUT });
  await page.getByRole('button', { name: 'API token: ada' }).click();
  assert.match(await page.locator('.viewer-status').textContent(), /Signed in as ada \(JWT\) · scopes READ, FORK · workspaces demo · expires/);
  await page.getByRole('button', { name: 'Cancel' }).click();
  assert.equal(await (await firstForkButton(page)).isEnabled(), true);

  await signIn(page, await mint({ sub: 'bea', scope: 'read' }));
  const button = await firstForkButton(page);
  assert.equal(await button.isDisabled(), true, 'a JWT without the fork scope cannot fork');
  assert.match(await button.getAttribute('title'), /FORK scope/);
  await screenshot(page, 'explorer-jwt-read-only');
});

test('a JWT that expires ends the live stream: the explorer says the token ended, and a new one brings it back', async () => {
  const { page } = browser;
  // The server allows 30 s of clock skew: a token whose exp was 25 s ago is accepted for ~5 s more.
  const short = await mint({ sub: 'cy', scope: 'read', ttl: '-25' });
  await signIn(page, short);
  const status = page.locator('[data-live="unauthenticated"]');
  await status.waitFor({ timeout: TIMEOUT }); // closed with 4403 TOKEN_EXPIRED; the token field has no other
  assert.match(await status.textContent(), /Token ended/);
  assert.equal(await page.getByRole('button', { name: 'Resume live updates' }).count(), 1);
  await screenshot(page, 'explorer-token-ended');

  await signIn(page, await mint({ sub: 'cy', scope: 'read' }));
  await page.locator('[data-live="live"]').waitFor({ timeout: TIMEOUT });
});
