// Queries and mutations over HTTP POST (GraphQL over HTTP), with the token from the provider.
import { CredentialError, ForkgraphError, TransportError, asError, isTokenError, type GraphQLErrorEntry } from './errors.js';
import type { TypedDocumentString } from './generated/graphql.js';

/**
 * TokenProvider returns the API token to send (`Authorization: Bearer`, and the websocket's
 * `connection_init`), or null for none. It is called before every request and connection;
 * forceRefresh is true after the server refused or ended the token (UNAUTHENTICATED, e.g. reason
 * `token_expired`; a stream ended with TOKEN_EXPIRED or TOKEN_REVOKED; a websocket closed with
 * 4403), so the provider fetches a new one instead of its cached one. Returning the refused token
 * again, or none, says there is no other: the client then gives up with a CredentialError.
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

/** authorization is the header form of a token ("" when there is none). */
export function authorization(token: string | null): string {
  return token ? `Bearer ${token}` : '';
}

/**
 * Credentials asks the token provider for the token to send, and for a new one after the server
 * refused or ended a token, which it never sends again: a provider that answers a refresh with
 * the refused token (or none) makes refreshed reject with CredentialError.
 */
export class Credentials {
  private readonly provider: TokenProvider | undefined;

  constructor(provider: TokenProvider | undefined) {
    this.provider = provider;
  }

  /** current is the provider's token now (its cached one), or null. */
  async current(): Promise<string | null> {
    if (!this.provider) return null;
    return (await this.provider({ forceRefresh: false })) || null;
  }

  /**
   * refreshed asks the provider for a token to replace refused, which the server answered with
   * refusal. A retryable refusal (`keys_unavailable`: the issuer's keys could not be fetched)
   * says nothing about the token, which may be sent again. Errors: CredentialError (the refusal's
   * code) when the provider has no token other than refused.
   */
  async refreshed(refused: string | null, refusal: ForkgraphError): Promise<string | null> {
    if (!this.provider) throw new CredentialError(refusal);
    const next = (await this.provider({ forceRefresh: true })) || null;
    if (refusal.retryable && refusal.code === 'UNAUTHENTICATED' && next) return next;
    if (!next || next === refused) throw new CredentialError(refusal);
    return next;
  }
}

/**
 * HttpTransport runs one operation per POST. A GraphQL error becomes ForkgraphError with the
 * server's code; a connection failure, a timeout or a gateway's non-GraphQL 5xx becomes
 * TransportError (the server may have processed the request). A token the server refuses
 * (UNAUTHENTICATED, e.g. reason `token_expired` or `token_revoked`) is refreshed once and the
 * request sent again (the refusal changed nothing); CredentialError when the provider has no new
 * token.
 */
export class HttpTransport {
  private readonly opts: HttpOptions;
  private readonly credentials: Credentials;

  constructor(opts: HttpOptions, credentials: Credentials = new Credentials(opts.token)) {
    this.opts = opts;
    this.credentials = credentials;
  }

  /** execute runs doc with variables and returns its data, or throws ForkgraphError/TransportError/CredentialError. */
  async execute<R, V>(doc: Document<R, V>, variables: V, options: RequestOptions = {}): Promise<R> {
    const token = await this.credentials.current();
    try {
      return await this.send(doc, variables, options, token);
    } catch (err) {
      if (!isTokenError(err)) throw err;
      const fresh = await this.credentials.refreshed(token, err as ForkgraphError);
      return this.send(doc, variables, options, fresh);
    }
  }

  private async send<R, V>(doc: Document<R, V>, variables: V, options: RequestOptions, token: string | null): Promise<R> {
    const doFetch = this.opts.fetch ?? globalThis.fetch;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...this.opts.headers,
    };
    const auth = authorization(token);
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
