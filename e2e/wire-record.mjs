// wire-record: a recording proxy for the e2e suites. run.sh starts one in front of each server when
// FORKGRAPH_E2E_RECORD names an output file; every HTTP exchange (request and response, streamed
// bodies included) and every websocket frame in both directions is written to that file, with the
// values that change from run to run (random ids, the e2e helpers' unique ids, timestamps, request
// ids, base64 that wraps them) replaced by stable placeholders. Two recordings of the same server
// code are then byte-identical, so `diff` of a recording before and after a refactor shows any change
// in what the transports put on the wire (scripts/e2e-wire-diff.sh does both runs and the diff).
//
// Usage: node wire-record.mjs LISTEN_PORT TARGET_URL OUT_FILE
// It writes OUT_FILE when it gets SIGTERM or SIGINT.
import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';

const [listenPort, target, outFile] = process.argv.slice(2);
const upstream = new URL(target);
const exchanges = [];

// Headers whose values say nothing about the transport's behaviour (or change every run).
const skipHeaders = new Set(['date', 'connection', 'keep-alive', 'host', 'user-agent', 'content-length',
  'sec-websocket-key', 'sec-websocket-accept', 'accept-encoding', 'accept-language', 'sec-fetch-mode',
  'x-request-id', 'transfer-encoding']);

function headerLines(prefix, headers) {
  return Object.entries(headers)
    .filter(([k]) => !skipHeaders.has(k.toLowerCase()))
    .map(([k, v]) => `${prefix}${k.toLowerCase()}: ${Array.isArray(v) ? v.join(', ') : v}`)
    .sort();
}

// normalize replaces what varies between runs with placeholders numbered by first appearance in
// one exchange, so the same value keeps the same name within it.
function normalize(text) {
  const names = new Map();
  const name = (kind, value) => {
    const key = `${kind}:${value}`;
    if (!names.has(key)) names.set(key, `<${kind}${[...names.keys()].filter((k) => k.startsWith(`${kind}:`)).length + 1}>`);
    return names.get(key);
  };
  const plain = (s) => s
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, (m) => name('uuid', m))
    .replace(/\b[0-9A-Z]{26}\b/g, (m) => name('token', m)) // SSE reservation tokens
    .replace(/\bh[A-Za-z0-9_-]{11}(?=-t\d)/g, (m) => name('turnid', m)) // a fork's new turn ids
    .replace(/^((?:turn|session|message|fork|lineage|operation)\w*\|)([0-9a-f]{8})\|/, (_, k, h) => `${k}${name('scope', h)}|`)
    .replace(/-\d+-[0-9a-z]{6,10}-(\d+)\b/g, '-<pid>-<t>-$1')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)/g, '<time>')
    .replace(/"(requestId|request_id|traceId|spanId|traceparent)":"[^"]*"/g, '"$1":"<id>"')
    .replace(/("(?:duration|elapsed|startOffset|durationMs|latencyMs|took)":)\d+(\.\d+)?/g, '$1<n>');
  // base64 (standard or URL alphabet) that decodes to printable text: cursors and global ids wrap
  // ids and times, so normalize what they hold.
  const b64 = (s) => s.replace(/(?<=["'=\s:])([A-Za-z0-9+/_-]{12,}={0,2})(?=["'&\s,}]|$)/g, (m) => {
    const decoded = Buffer.from(m.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
    if (!/^[\x20-\x7e]+$/.test(decoded) || decoded.length < 6) return m;
    return `b64(${plain(decoded)})`;
  });
  return plain(b64(text));
}

function record(lines) {
  exchanges.push(normalize(lines.join('\n')));
}

const server = http.createServer((req, res) => {
  const body = [];
  req.on('data', (c) => body.push(c));
  req.on('end', () => {
    const reqBody = Buffer.concat(body);
    const lines = [`> ${req.method} ${req.url}`, ...headerLines('> ', req.headers), `> ${reqBody.toString('utf8')}`];
    const out = http.request({
      host: upstream.hostname, port: upstream.port, method: req.method, path: req.url,
      headers: { ...req.headers, host: upstream.host },
    }, (up) => {
      lines.push(`< ${up.statusCode}`, ...headerLines('< ', up.headers));
      res.writeHead(up.statusCode, up.headers);
      const chunks = [];
      up.on('data', (c) => { chunks.push(c); res.write(c); });
      up.on('end', () => { lines.push(`< ${Buffer.concat(chunks).toString('utf8')}`); record(lines); res.end(); });
      up.on('error', () => { lines.push('< (upstream error)'); record(lines); res.destroy(); });
    });
    out.on('error', (err) => { lines.push(`< proxy error ${err.code}`); record(lines); res.destroy(); });
    out.end(reqBody);
  });
});

// frames parses websocket frames out of one direction's bytes as they come (RFC 6455; masked from
// the client, plain from the server) and appends each text or close frame's payload to lines.
function frames(dir, lines) {
  let buf = Buffer.alloc(0);
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      if (buf.length < 2) return;
      const opcode = buf[0] & 0x0f;
      const masked = (buf[1] & 0x80) !== 0;
      let len = buf[1] & 0x7f;
      let off = 2;
      if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); off = 4; }
      else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); off = 10; }
      const maskOff = off;
      if (masked) off += 4;
      if (buf.length < off + len) return;
      const payload = Buffer.from(buf.subarray(off, off + len));
      if (masked) for (let i = 0; i < len; i++) payload[i] ^= buf[maskOff + (i % 4)];
      buf = buf.subarray(off + len);
      if (opcode === 1) lines.push(`${dir} ${payload.toString('utf8')}`);
      else if (opcode === 8) lines.push(`${dir} close ${len >= 2 ? payload.readUInt16BE(0) : ''} ${payload.subarray(2).toString('utf8')}`);
      // ping/pong (9/10) and continuation frames are left out: their timing is the machine's.
    }
  };
}

server.on('upgrade', (req, socket, head) => {
  const lines = [`ws ${req.url}`, ...headerLines('> ', req.headers)];
  const up = net.connect(upstream.port, upstream.hostname, () => {
    const hdrs = Object.entries(req.headers).map(([k, v]) => `${k}: ${k === 'host' ? upstream.host : v}`);
    up.write(`${req.method} ${req.url} HTTP/1.1\r\n${hdrs.join('\r\n')}\r\n\r\n`);
    if (head.length) up.write(head);
  });
  const fromClient = frames('>', lines);
  let handshake = Buffer.alloc(0);
  let toClient = null;
  up.on('data', (c) => {
    socket.write(c);
    if (toClient) return toClient(c);
    handshake = Buffer.concat([handshake, c]);
    const end = handshake.indexOf('\r\n\r\n');
    if (end < 0) return;
    const [status, ...hs] = handshake.subarray(0, end).toString('latin1').split('\r\n');
    lines.push(`< ${status}`, ...headerLines('< ', Object.fromEntries(hs.map((h) => [h.slice(0, h.indexOf(':')), h.slice(h.indexOf(':') + 1).trim()]))));
    toClient = frames('<', lines);
    toClient(handshake.subarray(end + 4));
  });
  socket.on('data', (c) => { fromClient(c); up.write(c); });
  let done = false;
  const finish = () => { if (!done) { done = true; record(lines); } socket.destroy(); up.destroy(); };
  up.on('close', finish); socket.on('close', finish);
  up.on('error', finish); socket.on('error', finish);
});

const flush = () => {
  server.close();
  // Exchanges are sorted: the suites run some requests concurrently, so their order is the
  // scheduler's; within one exchange the order of frames is kept.
  fs.writeFileSync(outFile, `${exchanges.sort().join('\n\n')}\n`);
  process.exit(0);
};
process.on('SIGTERM', flush);
process.on('SIGINT', flush);
server.listen(Number(listenPort), '127.0.0.1', () => console.log(`wire-record listening on ${listenPort}`));
