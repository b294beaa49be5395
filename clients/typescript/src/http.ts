// Queries and mutations over HTTP POST (GraphQL over HTTP), with the token from the provider.
import { ForkgraphError, TransportError, asError, isTokenError, type GraphQLErrorEntry } from './errors.js';
import type { TypedDocumentString } from './generated/graphql.js';

/**
 * TokenProvider returns the API token to send (`Authorization: Bearer`, and the websocket's
 * `connection_init`), or null for none. It is called before every request and connection;
 * forceRefresh is true after the server refused or expired the token (UNAUTHENTICATED,
 * TOKEN_EXPIRED, websocket close 4403), so the provider fetches a new one instead of its cached one.
 */
export type TokenProvider = (context: { forceRefresh: boolean }) => string | null | undefined | Promise<string | null | undefined>;

/** A document with its result and variables types (the generated documents are these). */
export type Document<R, V> = TypedDocumentString<R, V>;

/** HttpOptions configure the HTTP transport. */
export interface HttpOptions {
  url: string;
  fetch?: typeof fetch;
  token?: TokenProvider;
  headers?: Record<string, string>;
  /** Bound on one request; past it the request counts as cut (TransportError). */
  timeoutMs: number;
}

/** RequestOptions bound one request. */
export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

interface ResponseBody {
  data?: unknown;
  errors?: GraphQLErrorEntry[];
}

/** bearer turns the provider's token into header form ("" when there is none). */
export async function bearer(token: TokenProvider | undefined, forceRefresh: boolean): Promise<string> {
  if (!token) return '';
  const value = await token({ forceRefresh });
  return value ? `Bearer ${value}` : '';
}

/**
 * HttpTransport runs one operation per POST. A GraphQL error becomes ForkgraphError with the
 * server's code; a connection failure, a timeout or a gateway's non-GraphQL 5xx becomes
 * TransportError (the server may have processed the request). A token the server refuses is
 * refreshed once and the request sent again (the refusal changed nothing).
 */
export class HttpTransport {
  private readonly opts: HttpOptions;

  constructor(opts: HttpOptions) {
    this.opts = opts;
  }

  /** execute runs doc with variables and returns its data, or throws ForkgraphError/TransportError. */
  async execute<R, V>(doc: Document<R, V>, variables: V, options: RequestOptions = {}): Promise<R> {
    try {
      return await this.send(doc, variables, options, false);
    } catch (err) {
      if (this.opts.token && isTokenError(err)) return this.send(doc, variables, options, true);
      throw err;
    }
  }

  private async send<R, V>(doc: Document<R, V>, variables: V, options: RequestOptions, refresh: boolean): Promise<R> {
    const doFetch = this.opts.fetch ?? globalThis.fetch;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...this.opts.headers,
    };
    const auth = await bearer(this.opts.token, refresh);
    if (auth) headers.authorization = auth;
    const timeout = AbortSignal.timeout(options.timeoutMs ?? this.opts.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let response: Response;
    let text: string;
    try {
      response = await doFetch(this.opts.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ query: String(doc), variables }),
        signal,
      });
      text = await response.text();
    } catch (err) {
      if (options.signal?.aborted) throw asError(options.signal.reason ?? err);
      throw new TransportError(`request to ${this.opts.url} failed: ${asError(err).message}`, { cause: err });
    }
    let body: ResponseBody | null = null;
    try {
      body = JSON.parse(text) as ResponseBody;
    } catch {
      body = null;
    }
    if (!body || typeof body !== 'object' || (!('data' in body) && !Array.isArray(body.errors))) {
      if (response.status >= 500 || response.status === 429 || response.status === 408) {
        throw new TransportError(`${this.opts.url} answered ${response.status} without a GraphQL response`, { status: response.status });
      }
      throw new ForkgraphError(`${this.opts.url} answered ${response.status} without a GraphQL response`, {
        code: 'INVALID_RESPONSE',
        status: response.status,
      });
    }
    if (body.errors && body.errors.length > 0) throw ForkgraphError.fromErrors(body.errors, response.status);
    if (body.data === null || body.data === undefined) {
      throw new ForkgraphError(`${this.opts.url} answered ${response.status} without data`, { code: 'INVALID_RESPONSE', status: response.status });
    }
    return body.data as R;
  }
}
