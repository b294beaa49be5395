// A small OpenID Connect issuer for the browser tests, run by test-browser.sh before the servers:
// a discovery document and a JWKS with one generated P-256 key (ES256), and GET /mint, which
// signs a token for the tests (?sub=&scope=&workspaces=demo,other&ttl=seconds). Signing is
// node:crypto's; it listens on 127.0.0.1:$ISSUER_PORT and prints its URL.
import { generateKeyPairSync, sign } from 'node:crypto';
import { createServer } from 'node:http';

export const AUDIENCE = 'https://forkgraph.test/playground';
const port = Number(process.env.ISSUER_PORT || 0);
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'pw-1', alg: 'ES256', use: 'sig' };

const b64 = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

function mint(url, issuer) {
  const q = url.searchParams;
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: issuer, aud: AUDIENCE, sub: q.get('sub') || 'pw-user', iat: now,
    exp: now + Number(q.get('ttl') || 3600),
    workspaces: (q.get('workspaces') || 'demo').split(','), scope: q.get('scope') || '',
    preferred_username: q.get('name') || undefined,
  };
  const input = `${b64({ alg: 'ES256', typ: 'JWT', kid: jwk.kid })}.${b64(claims)}`;
  const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

const server = createServer((req, res) => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const url = new URL(req.url, issuer);
  const json = (body) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
  switch (url.pathname) {
    case '/.well-known/openid-configuration':
      return json({ issuer, jwks_uri: `${issuer}/jwks`, id_token_signing_alg_values_supported: ['ES256'] });
    case '/jwks':
      return json({ keys: [jwk] });
    case '/mint':
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end(mint(url, issuer));
    default:
      res.writeHead(404);
      return res.end();
  }
});
server.listen(port, '127.0.0.1', () => {
  console.log(`http://127.0.0.1:${server.address().port}`);
});
