// The network layer a Relay app needs for @defer against forkgraph (or any server that speaks the
// incremental delivery RFC, as Apollo Client does). Relay 21 reads deferred data only in the older
// shape, one payload per fragment with `label` and `path` at its top level and
// `extensions.is_final` on the last; forkgraph answers a query with @defer as multipart/mixed whose
// parts are `{data, hasNext: true}`, then `{incremental: [{data, path, label, errors}], hasNext}`.
// incrementalFetch reads the parts as they arrive and hands Relay each one in its shape. Give it to
// Network.create; it needs nothing but fetch (Node 18+, every browser).
import relay from 'relay-runtime';

const { Observable } = relay;

// The media types a client that reads incremental delivery asks for (what Apollo Client 4 sends):
// a query with @defer is answered as multipart/mixed, any other as JSON.
const ACCEPT = 'multipart/mixed;deferSpec=20220824, application/graphql-response+json, application/json';

/**
 * incrementalFetch returns a Relay fetch function posting to graphqlURL. headers, when given, are
 * added to every request (e.g. authorization).
 */
export function incrementalFetch(graphqlURL, headers = {}) {
  return (params, variables) =>
    Observable.create((sink) => {
      const abort = new AbortController();
      (async () => {
        const res = await fetch(graphqlURL, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers },
          body: JSON.stringify({ query: params.text, variables, operationName: params.name }),
          signal: abort.signal,
        });
        if (!(res.headers.get('content-type') ?? '').startsWith('multipart/mixed')) {
          sink.next(await res.json());
          sink.complete();
          return;
        }
        for await (const payload of readMultipart(res)) {
          for (const response of toRelay(payload)) sink.next(response);
        }
        sink.complete();
      })().catch((err) => {
        if (!abort.signal.aborted) sink.error(err);
      });
      return () => abort.abort(); // Relay unsubscribed: stop reading
    });
}

/**
 * toRelay turns one incremental delivery payload into the payloads Relay reads: the first keeps
 * its data (and errors); each incremental item becomes `{data, label, path, errors}`; the last of
 * the response carries `extensions.is_final`.
 */
export function toRelay(payload) {
  const extensions = { ...payload.extensions, is_final: payload.hasNext === false };
  if (!payload.incremental) return [{ data: payload.data, errors: payload.errors, extensions }];
  return payload.incremental.map((item, i) => ({
    data: item.data,
    label: item.label,
    path: item.path,
    errors: item.errors,
    extensions: i === payload.incremental.length - 1 ? extensions : { is_final: false },
  }));
}

/**
 * readMultipart yields the JSON body of each part of a multipart/mixed response as the part
 * arrives (RFC 2046 framing: parts after `--boundary` lines, the last `--boundary--`).
 */
export async function* readMultipart(res) {
  const boundary = /boundary="?([^";]+)"?/.exec(res.headers.get('content-type') ?? '')?.[1];
  if (!boundary) throw new Error(`not a multipart response: ${res.headers.get('content-type')}`);
  const delimiter = `\r\n--${boundary}`;
  const decoder = new TextDecoder();
  let buffer = '\r\n'; // the first delimiter may open the body without a line break before it
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf(delimiter, 1)) !== -1) {
      const part = buffer.slice(0, end);
      buffer = buffer.slice(end);
      const body = partBody(part, delimiter);
      if (body != null) yield JSON.parse(body);
    }
    if (buffer.startsWith(`${delimiter}--`)) return;
  }
}

// partBody is the body of one part (the text after its headers), or null for the preamble.
function partBody(part, delimiter) {
  if (!part.startsWith(delimiter)) return null;
  const headersEnd = part.indexOf('\r\n\r\n');
  if (headersEnd === -1) return null;
  const body = part.slice(headersEnd + 4).trim();
  return body === '' ? null : body;
}
