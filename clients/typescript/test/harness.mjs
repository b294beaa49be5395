// Test harness: real forkgraph servers built from this checkout (FORKGRAPH_BIN, built by
// test.sh), a proxy that can cut answers the server already produced, and GraphQL helpers to
// seed sessions. Every wait on the external server is a bounded poll; every wait on the client is
// on its own state changes.
import { spawn } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';

const BIN = process.env.FORKGRAPH_BIN;
if (!BIN) throw new Error('FORKGRAPH_BIN must name the forkgraph binary (test.sh builds it)');

/** freePort asks the kernel for a free loopback port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** until polls fn (an external condition) every 25 ms until it returns a truthy value, or fails after timeoutMs. */
export async function until(fn, { timeoutMs = 10000, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await sleep(25);
  }
}

const servers = new Set();
const dirs = new Set();

/** tempDir makes a directory removed at cleanup(). */
export function tempDir() {
  const d = mkdtempSync(join(tmpdir(), 'forkgraph-client-'));
  dirs.add(d);
  return d;
}

/**
 * tokensFile makes a -tokens-file for a server: write(lines) replaces its lines (`name token
 * workspaces scopes`) by a rename over it, as configuration tools do, which the server reloads.
 */
export function tokensFile(lines) {
  const path = join(tempDir(), 'tokens.txt');
  const write = (next) => {
    writeFileSync(`${path}.tmp`, `${next.join('\n')}\n`);
    renameSync(`${path}.tmp`, path);
  };
  write(lines);
  return { path, write };
}

/**
 * startServer runs forkgraph on a free port with its own SQLite file (or db) and resolves once
 * /healthz answers. flags are extra command-line flags.
 */
export async function startServer({ db = join(tempDir(), 'forkgraph.db'), flags = [], port } = {}) {
  port ??= await freePort();
  const args = ['-addr', `127.0.0.1:${port}`, '-db', db, '-no-seed', '-sim-latency', '30ms', ...flags];
  const proc = spawn(BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr.on('data', (d) => {
    log = (log + d.toString()).slice(-20000);
  });
  const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  const server = {
    port,
    db,
    url: `http://127.0.0.1:${port}/graphql`,
    base: `http://127.0.0.1:${port}`,
    proc,
    log: () => log,
    /** stop ends the server (SIGTERM: graceful; SIGKILL: a crash) and resolves when it exited. */
    async stop(signal = 'SIGTERM') {
      servers.delete(server);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
  servers.add(server);
  await until(async () => {
    if (proc.exitCode !== null) throw new Error(`forkgraph exited: ${log}`);
    const r = await fetch(`${server.base}/healthz`).catch(() => null);
    return r && r.ok;
  }, { timeoutMs: 20000, what: `forkgraph on port ${port}` });
  return server;
}

// The browser suite's OpenID Connect issuer (discovery, a JWKS with one generated ES256 key, and
// GET /mint for the tests), run as its own process so forkgraph verifies real signatures.
const ISSUER_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '../../../web/playground/test/issuer.mjs');
/** The `aud` the issuer's tokens carry (issuer.mjs's AUDIENCE): the servers' -jwt-audience. */
export const JWT_AUDIENCE = 'https://forkgraph.test/playground';
const issuers = new Set();

/**
 * startIssuer runs the test issuer on a free port. mint({ sub, scope, workspaces, ttl }) returns a
 * JWT for workspaces (a string or a list) that expires ttl seconds from now (negative: already
 * expired). jwtFlags are the flags of a server that trusts it, with no clock skew, so a token ends
 * at its exp.
 */
export async function startIssuer() {
  const port = await freePort();
  const proc = spawn(process.execPath, [ISSUER_SCRIPT], { env: { ...process.env, ISSUER_PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  const issuer = {
    url,
    jwtFlags: ['-oidc-issuer', url, '-jwt-audience', JWT_AUDIENCE, '-jwt-clock-skew', '0s'],
    async mint({ sub = 'client-test', scope = 'read', workspaces, ttl = 3600 }) {
      const q = new URLSearchParams({ sub, scope, workspaces: [].concat(workspaces).join(','), ttl: String(ttl) });
      const r = await fetch(`${url}/mint?${q}`);
      if (!r.ok) throw new Error(`the issuer answered ${r.status}`);
      return r.text();
    },
    stop() {
      issuers.delete(issuer);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill();
      return exited;
    },
  };
  issuers.add(issuer);
  await until(async () => {
    if (proc.exitCode !== null) throw new Error('the issuer exited');
    const r = await fetch(`${url}/jwks`).catch(() => null);
    return r && r.ok;
  }, { timeoutMs: 10000, what: 'the test issuer' });
  return issuer;
}

/** cleanup stops every server, issuer and proxy and removes temp dirs. */
export async function cleanup() {
  await Promise.all([...servers].map((s) => s.stop()));
  await Promise.all([...issuers].map((i) => i.stop()));
  await Promise.all([...proxies].map((p) => p.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}

const proxies = new Set();

/**
 * startProxy listens on a free port and forwards HTTP requests and websocket upgrades to
 * 127.0.0.1:upstreamPort. Rules decide per HTTP request, by its GraphQL body:
 *   { match: (body) => bool, action: 'cut', times }    forward it, let the server answer, then
 *                                                      drop the answer (destroy the client socket)
 *   { match, action: 'refuse', times }                 answer 503 without forwarding
 * seen lists every HTTP request body the proxy received (parsed JSON) and what it did.
 */
export async function startProxy(upstreamPort) {
  const rules = [];
  const seen = [];
  const sockets = new Set();
  const streams = new Set();
  let upstream = upstreamPort;
  let held = false;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body = null;
      try {
        body = JSON.parse(raw.toString() || 'null');
      } catch {
        body = null;
      }
      const rule = rules.find((r) => r.times > 0 && body && r.match(body));
      if (rule) rule.times--;
      const action = rule ? rule.action : 'forward';
      seen.push({ body, action, path: req.url });
      if (action === 'refuse') {
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('proxy: refused\n');
        return;
      }
      const up = http.request({ host: '127.0.0.1', port: upstream, method: req.method, path: req.url, headers: req.headers }, (upRes) => {
        if (action === 'cut') {
          upRes.resume();
          upRes.on('end', () => req.socket.destroy()); // the server answered; the client never hears it
          return;
        }
        // Streamed through (server-sent events never end on their own).
        res.writeHead(upRes.statusCode, upRes.headers);
        upRes.pipe(res);
        const pair = { socket: req.socket, up: upRes.socket };
        streams.add(pair);
        res.on('close', () => streams.delete(pair));
      });
      up.on('error', () => req.socket.destroy());
      up.end(raw);
    });
  });
  server.on('upgrade', (req, socket, head) => {
    const up = net.connect(upstream, '127.0.0.1');
    const pair = { socket, up };
    sockets.add(pair);
    const forget = () => {
      sockets.delete(pair);
      socket.destroy();
      up.destroy();
    };
    up.on('error', forget);
    socket.on('error', forget);
    up.on('close', forget);
    socket.on('close', forget);
    up.on('connect', () => {
      let headText = `${req.method} ${req.url} HTTP/1.1\r\n`;
      for (let i = 0; i < req.rawHeaders.length; i += 2) headText += `${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}\r\n`;
      up.write(headText + '\r\n');
      if (head && head.length) up.write(head);
      if (!held) up.pipe(socket);
      socket.pipe(up);
    });
  });
  const port = await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
  const proxy = {
    port,
    url: `http://127.0.0.1:${port}/graphql`,
    seen,
    /** rule adds a rule (see startProxy). */
    rule(match, action, times = 1) {
      const r = { match, action, times };
      rules.push(r);
      return r;
    },
    /** dropWebsockets cuts every websocket connection, as a network failure would. */
    dropWebsockets() {
      const n = sockets.size;
      for (const p of [...sockets]) {
        p.socket.destroy();
        p.up.destroy();
      }
      return n;
    },
    /** dropStreams cuts every HTTP response still streaming (server-sent events). */
    dropStreams() {
      const n = streams.size;
      for (const p of [...streams]) {
        p.socket.destroy();
        p.up.destroy();
      }
      return n;
    },
    /** holdWebsockets stops passing the server's websocket bytes to the clients (a stalled network). */
    holdWebsockets() {
      held = true;
      for (const p of sockets) {
        p.up.unpipe(p.socket);
        p.up.pause();
      }
    },
    /** releaseWebsockets passes them on again. */
    releaseWebsockets() {
      held = false;
      for (const p of sockets) {
        p.up.pipe(p.socket);
        p.up.resume();
      }
    },
    get websockets() {
      return sockets.size;
    },
    setUpstream(p) {
      upstream = p;
    },
    close() {
      proxies.delete(proxy);
      for (const p of sockets) {
        p.socket.destroy();
        p.up.destroy();
      }
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  proxies.add(proxy);
  return proxy;
}

/** isOperation matches a proxied request body by the root field it runs. */
export const runs = (field) => (body) => typeof body?.query === 'string' && new RegExp(`\\b${field}\\s*\\(`).test(body.query);

/** gql runs a GraphQL operation against url and returns data, throwing on errors. */
export async function gql(url, query, variables = {}, headers = {}) {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query, variables }) });
  const body = await r.json();
  if (body.errors?.length) throw new Error(`${body.errors[0].message} (${body.errors[0].extensions?.code})`);
  return body.data;
}

const REPORT_SESSION = `mutation($input: ReportSessionInput!) { reportSession(input: $input) { localId } }`;
const REPORT_TURN = `mutation($input: ReportTurnInput!) { reportTurn(input: $input) { localId } }`;
const APPEND = `mutation($input: AppendMessagesInput!) { appendMessages(input: $input) { localId } }`;

/**
 * seedSession reports a root session of the simulated provider (settings.simulated scripts it)
 * with `turns` settled, provider-bound turns, and returns its ids.
 */
export async function seedSession(url, { workspaceId, id = `s-${randomUUID().slice(0, 8)}`, title = 'A session', simulated = {}, turns = 2, headers = {} }) {
  await gql(url, REPORT_SESSION, { input: { workspaceId, id, provider: 'simulated', providerSessionId: `p-${workspaceId}-${id}`, title, settings: { simulated } } }, headers);
  const turnIds = [];
  for (let i = 1; i <= turns; i++) {
    const t = `${id}-t${i}`;
    await gql(url, REPORT_TURN, { input: { workspaceId, sessionId: id, id: t, phase: 'SETTLED', outcome: 'COMPLETED', providerTurnId: `p-${t}`, providerTurnBinding: { turn: i } } }, headers);
    await gql(url, APPEND, { input: { workspaceId, sessionId: id, turnId: t, messages: [{ id: `${t}-u`, role: 'USER', content: `question ${i}` }, { id: `${t}-a`, role: 'ASSISTANT', content: `answer ${i}` }] } }, headers);
    turnIds.push(t);
  }
  return { workspaceId, sessionId: id, turnIds };
}

/** report reports (upserts) session id of the simulated provider: one SESSION_UPSERTED event in workspaceId's log. */
export const report = (url, workspaceId, id, extra = {}, headers = {}) =>
  gql(url, REPORT_SESSION, { input: { workspaceId, id, provider: 'simulated', providerSessionId: `p-${workspaceId}-${id}`, ...extra } }, headers);

/** eventCursor reads workspaceEventCursor (for a workspace without events: the start of its log). */
export const eventCursor = async (url, workspaceId, headers = {}) =>
  (await gql(url, `query($ws: ID!) { workspaceEventCursor(workspaceId: $ws) }`, { ws: workspaceId }, headers)).workspaceEventCursor;

/** setScript changes a seeded session's simulated provider script. */
export function setScript(url, { workspaceId, sessionId }, simulated, headers = {}) {
  return gql(url, REPORT_SESSION, { input: { workspaceId, id: sessionId, provider: 'simulated', settings: { simulated } } }, headers);
}

/** boundaryFacts reads what the server holds for a boundary: its operations and the forks of the source. */
export async function boundaryFacts(url, { workspaceId, sessionId, turnId }, headers = {}) {
  const data = await gql(url, `query($ws: ID!, $s: ID!, $t: ID!) {
    forkOperations(workspaceId: $ws, first: 100, filter: { sourceSessionId: $s, throughTurnId: $t }) {
      totalCount edges { node { localId requestId targetSessionId status phase acknowledgedAt } } }
    session(workspaceId: $ws, id: $s) { forks { operationId targetSessionId }
      turns(first: 100) { edges { node { localId pendingForkOperation { localId } } } } }
  }`, { ws: workspaceId, s: sessionId, t: turnId }, headers);
  const turn = data.session.turns.edges.map((e) => e.node).find((t) => t.localId === turnId);
  return {
    operations: data.forkOperations.edges.map((e) => e.node),
    forks: data.session.forks,
    pending: turn?.pendingForkOperation ?? null,
  };
}

/** uniqueWorkspace names a fresh workspace per test, so tests on one server never meet. */
export const uniqueWorkspace = (name) => `${name}-${randomUUID().slice(0, 8)}`;
