// Subscriptions over graphql-ws (graphql-transport-ws, the default) or graphql-sse ("distinct
// connections" mode, optional). Neither client retries on its own: graphql-ws would replay the
// original subscribe payload, and a resumed workspace stream must say `after: <last cursor>`
// instead, so the callers (the fork follower, the workspace watch) resubscribe themselves.
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { CredentialError, ForkgraphError, TransportError, asError, isTokenError, type GraphQLErrorEntry } from './errors.js';
import { authorization, type Credentials, type Document } from './http.js';

/** StreamSink receives one subscription's results: next per result, then error or complete. */
export interface StreamSink<T> {
  next(data: T): void;
  error(err: ForkgraphError): void;
  complete(): void;
}

/** Streams runs subscriptions over one transport. */
export interface Streams {
  /** subscribe starts doc and returns the function that ends it. */
  subscribe<R, V>(doc: Document<R, V>, variables: V, sink: StreamSink<R>): () => void;
  /** onConnected registers a listener for each new connection; it returns the unregister function. */
  onConnected(listener: () => void): () => void;
  /** isOpen tells whether a connection is up now (a new subscription starts on it at once). */
  isOpen(): boolean;
  /** dispose closes the transport. */
  dispose(): void;
}

/**
 * SSEClientFactory is graphql-sse's createClient (pass it as `sse.createClient`): typed by the
 * little the client uses, so graphql-sse stays an optional peer dependency.
 */
export type SSEClientFactory = (options: {
  url: string;
  /** graphql-sse passes the subscribe payload it connects for (distinct connections mode). */
  headers: (request?: unknown) => Promise<Record<string, string>>;
  fetchFn?: unknown;
  retryAttempts: number;
  singleConnection?: false;
}) => {
  subscribe(
    payload: { query: string; variables?: Record<string, unknown> },
    sink: { next(value: unknown): void; error(error: unknown): void; complete(): void },
  ): () => void;
  dispose(): void;
};

/** WsOptions configure the graphql-ws transport. */
export interface WsOptions {
  url: string;
  credentials: Credentials;
  /** A WebSocket implementation for runtimes without a global one (Node 20: the `ws` package). */
  webSocketImpl?: unknown;
  keepAliveMs: number;
}

interface Result {
  data?: unknown;
  errors?: readonly GraphQLErrorEntry[];
}

/** quietly drops what graphql-ws's dispose settles with: a socket closed while connecting rejects it. */
function quietly(result: void | Promise<void>): void {
  if (result instanceof Promise) result.catch(() => undefined);
}

/** resultError is the error of a result that carries `errors`, or null. */
function resultError(result: Result): ForkgraphError | null {
  return result.errors && result.errors.length > 0 ? ForkgraphError.fromErrors(result.errors) : null;
}

/** socketError maps what graphql-ws reports to an error with a code callers can branch on. */
export function socketError(err: unknown): ForkgraphError {
  if (err instanceof ForkgraphError) return err;
  if (Array.isArray(err)) return ForkgraphError.fromErrors(err as GraphQLErrorEntry[]);
  const close = err as { code?: unknown; reason?: unknown } | null;
  if (close && typeof close.code === 'number') {
    const reason = typeof close.reason === 'string' && close.reason ? ` ${close.reason}` : '';
    if (close.code === 4403) {
      // The server names why a stream's credential ended in the close reason (docs/security.md,
      // "Streams end with their credential"); any other 4403 is connection_init refused.
      const ended = close.reason === 'TOKEN_EXPIRED' || close.reason === 'TOKEN_REVOKED' ? close.reason : null;
      if (ended) {
        const why = ended === 'TOKEN_EXPIRED' ? 'the token it was opened with expired' : 'the token it was opened with was revoked';
        return new ForkgraphError(`websocket closed (4403 ${ended}): ${why}`, { code: ended, retryable: true });
      }
      return new ForkgraphError(`websocket closed (4403${reason}): the token was refused`, { code: 'CONNECTION_FORBIDDEN', retryable: true });
    }
    return new ForkgraphError(`websocket closed (${close.code}${reason})`, { code: 'STREAM_CLOSED', retryable: true });
  }
  return new TransportError(`websocket failed: ${err instanceof Error ? err.message : 'connection error'}`, { cause: err });
}

/** A refusal waiting for its token's replacement: the token it refused and the error it gave. */
interface Refusal {
  token: string | null;
  error: ForkgraphError;
}

/**
 * WsStreams runs subscriptions over one lazily opened graphql-ws connection. A token error
 * (TOKEN_EXPIRED or TOKEN_REVOKED ending the stream, close 4403 at connection_init,
 * UNAUTHENTICATED) on the current connection closes it, and the next connection asks the token
 * provider with forceRefresh: the server bound the old token to that connection at
 * connection_init, so only a new connection carries the new token. When the provider has no other
 * token, that connection fails its subscriptions with CredentialError before it sends anything.
 */
export class WsStreams implements Streams {
  private readonly opts: WsOptions;
  private client: WsClient | null = null;
  private generation = 0;
  /** The token the current connection sent at connection_init. */
  private sent: string | null = null;
  /** The refreshed token the current connection waits for (null: it asks the provider as usual). */
  private refreshing: Promise<string | null> | null = null;
  /** Set after a token error until a refreshed token is in hand. */
  private refusal: Refusal | null = null;
  private readonly connected = new Set<() => void>();
  private open = false;

  constructor(opts: WsOptions) {
    this.opts = opts;
  }

  private current(): { client: WsClient; generation: number; refreshing: Promise<string | null> | null } {
    if (!this.client) {
      this.generation++;
      this.open = false;
      this.sent = null;
      const generation = this.generation;
      // After a token error the new token is fetched before the socket opens (a provider may take
      // seconds; the server closes a socket that sends no connection_init within 3 s), and the
      // subscriptions of this connection start once it is in hand.
      const refusal = this.refusal;
      const refreshing = refusal ? this.opts.credentials.refreshed(refusal.token, refusal.error) : null;
      refreshing?.then(
        () => {
          if (this.refusal === refusal) this.refusal = null;
        },
        () => undefined, // each subscription of the connection fails with it
      );
      this.refreshing = refreshing;
      const client: WsClient = createWsClient({
        url: this.opts.url,
        webSocketImpl: this.opts.webSocketImpl,
        lazy: true,
        retryAttempts: 0,
        shouldRetry: () => false,
        keepAlive: this.opts.keepAliveMs,
        connectionParams: async () => {
          const token = refreshing ? await refreshing : await this.opts.credentials.current();
          if (this.generation === generation) this.sent = token;
          const auth = authorization(token);
          return auth ? { authorization: auth } : {};
        },
        on: {
          connected: () => {
            if (this.client !== client) return;
            this.open = true;
            for (const listener of [...this.connected]) listener();
          },
          closed: () => {
            if (this.client === client) this.open = false;
          },
        },
      });
      this.client = client;
    }
    return { client: this.client, generation: this.generation, refreshing: this.refreshing };
  }

  /** retire drops connection generation; after a token error, the next one refreshes the token. */
  private retire(generation: number, tokenError: ForkgraphError | null): void {
    if (generation !== this.generation || !this.client) return;
    if (tokenError) this.refusal = { token: this.sent, error: tokenError };
    const old = this.client;
    this.client = null;
    this.refreshing = null;
    this.open = false;
    quietly(old.dispose());
  }

  subscribe<R, V>(doc: Document<R, V>, variables: V, sink: StreamSink<R>): () => void {
    const { client, generation, refreshing } = this.current();
    let ended = false;
    let stop: (() => void) | null = null;
    const fail = (err: ForkgraphError) => {
      if (ended) return;
      ended = true;
      // A CredentialError: the provider had no new token. The refusal stays pending, so the
      // next connection (after resume()) asks the provider again.
      if (err instanceof CredentialError) this.retire(generation, null);
      else if (isTokenError(err)) this.retire(generation, err);
      sink.error(err);
    };
    const start = () => {
      if (ended) return;
      stop = client.subscribe<unknown>(
        { query: String(doc), variables: variables as Record<string, unknown> },
        {
          next: (result) => {
            if (ended) return;
            const err = resultError(result as Result);
            if (err) fail(err);
            else sink.next((result as Result).data as R);
          },
          error: (err) => fail(socketError(err)),
          complete: () => {
            if (ended) return;
            ended = true;
            sink.complete();
          },
        },
      );
    };
    if (refreshing) refreshing.then(start, (err: unknown) => fail(socketError(err)));
    else start();
    return () => {
      ended = true;
      stop?.();
    };
  }

  onConnected(listener: () => void): () => void {
    this.connected.add(listener);
    return () => this.connected.delete(listener);
  }

  isOpen(): boolean {
    return this.client !== null && this.open;
  }

  dispose(): void {
    this.connected.clear();
    if (this.client) quietly(this.client.dispose());
    this.client = null;
    this.open = false;
  }
}

/** SseOptions configure the graphql-sse transport. */
export interface SseOptions {
  url: string;
  credentials: Credentials;
  createClient: SSEClientFactory;
  fetch?: typeof fetch;
}

/** sseError maps what graphql-sse reports (a NetworkError with its response, errors, an Error). */
function sseError(err: unknown): ForkgraphError {
  if (err instanceof ForkgraphError) return err;
  if (Array.isArray(err)) return ForkgraphError.fromErrors(err as GraphQLErrorEntry[]);
  const response = (err as { response?: { status?: number } } | null)?.response;
  if (response && typeof response.status === 'number') {
    if (response.status === 401) return new ForkgraphError('event stream refused: 401', { code: 'UNAUTHENTICATED', status: 401 });
    if (response.status === 403) return new ForkgraphError('event stream refused: 403', { code: 'FORBIDDEN', status: 403 });
    return new TransportError(`event stream answered ${response.status}`, { status: response.status, cause: err });
  }
  return new TransportError(`event stream failed: ${asError(err).message}`, { cause: err });
}

/**
 * SseStreams runs each subscription as its own server-sent event stream (graphql-sse's distinct
 * connections mode); the token is read per stream, refreshed after a token error (the stream's
 * last event TOKEN_EXPIRED or TOKEN_REVOKED, a 401); CredentialError when the provider has no
 * other token.
 */
export class SseStreams implements Streams {
  private readonly client: ReturnType<SSEClientFactory>;
  /** The token each stream's request sent, by its subscribe payload. */
  private readonly sent = new WeakMap<object, string | null>();
  private refusal: Refusal | null = null;
  private readonly connected = new Set<() => void>();

  constructor(opts: SseOptions) {
    this.client = opts.createClient({
      url: opts.url,
      fetchFn: opts.fetch,
      retryAttempts: 0,
      singleConnection: false,
      headers: async (request?: unknown) => {
        const refusal = this.refusal;
        const token = refusal ? await opts.credentials.refreshed(refusal.token, refusal.error) : await opts.credentials.current();
        if (refusal && this.refusal === refusal) this.refusal = null;
        if (request && typeof request === 'object') this.sent.set(request, token);
        queueMicrotask(() => {
          for (const listener of [...this.connected]) listener();
        });
        const headers: Record<string, string> = {};
        const auth = authorization(token);
        if (auth) headers.authorization = auth;
        return headers;
      },
    });
  }

  subscribe<R, V>(doc: Document<R, V>, variables: V, sink: StreamSink<R>): () => void {
    let ended = false;
    const payload = { query: String(doc), variables: variables as Record<string, unknown> };
    const fail = (err: ForkgraphError) => {
      if (ended) return;
      ended = true;
      if (isTokenError(err) && !(err instanceof CredentialError)) this.refusal = { token: this.sent.get(payload) ?? null, error: err };
      sink.error(err);
    };
    const stop = this.client.subscribe(
      payload,
      {
        next: (result) => {
          if (ended) return;
          const err = resultError(result as Result);
          if (err) fail(err);
          else sink.next((result as Result).data as R);
        },
        error: (err) => fail(sseError(err)),
        complete: () => {
          if (ended) return;
          ended = true;
          sink.complete();
        },
      },
    );
    return () => {
      ended = true;
      stop();
    };
  }

  onConnected(listener: () => void): () => void {
    this.connected.add(listener);
    return () => this.connected.delete(listener);
  }

  isOpen(): boolean {
    return false; // each stream is its own request: "live" once its headers are sent
  }

  dispose(): void {
    this.connected.clear();
    this.client.dispose();
  }
}
