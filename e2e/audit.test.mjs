// The graphql-http package's server audit (GraphQL over HTTP): every audit must be "ok" — no
// failure, no warning, no notice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverAudits } from 'graphql-http';
import { httpURL } from './lib.mjs';

for (const audit of serverAudits({ url: httpURL })) {
  test(`audit ${audit.id}: ${audit.name}`, async () => {
    const result = await audit.fn();
    let detail = '';
    if (result.status !== 'ok') {
      const res = result.response;
      detail = `${result.reason}; HTTP ${res?.status} ${res?.headers?.get('content-type')}: ${await res?.text?.().catch(() => '')}`;
    }
    assert.equal(result.status, 'ok', detail);
  });
}
