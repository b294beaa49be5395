// Subscriptions over graphql-ws (graphql-transport-ws, the default) or graphql-sse ("distinct
// connections" mode, optional). Neither client retries on its own: graphql-ws would replay the
// original subscribe payload, and a resumed workspace stream must say `after: <last cursor>`
// instead, so the callers (the fork follower, the workspace watch) resubscribe themselves.
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws';
import { ForkgraphError, TransportError, asError, isTokenError, type GraphQLErrorEntry } from './errors.js';
import { bearer, type Document, type TokenProvider } from './http.js';

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
  headers: () => Promise<Record<string, string>>;
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
  token?: TokenProvider;
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
      return new ForkgraphError(`websocket closed (4403${reason}): the token was refused`, { code: 'CONNECTION_FORBIDDEN', retryable: true });
    }
    return new ForkgraphError(`websocket closed (${close.code}${reason})`, { code: 'STREAM_CLOSED', retryable: true });
  }
  return new TransportError(`websocket failed: ${err instanceof Error ? err.message : 'connection error'}`, { cause: err });
}

/**
 * WsStreams runs subscriptions over one lazily opened graphql-ws connection. A token error
 * (UNAUTHENTICATED, TOKEN_EXPIRED, close 4403) on the current connection closes it, and the next
 * connection asks the token provider with forceRefresh: the server bound the old token to that
 * connection at connection_init, so only a new connection carries the new token.
 */
export class WsStreams implements Streams {
  private readonly opts: WsOptions;
  private client: WsClient | null = null;
  private generation = 0;
  private refreshNext = false;
  private readonly connected = new Set<() => void>();
  private open = false;

  constructor(opts: WsOptions) {
    this.opts = opts;
  }

  private current(): { client: WsClient; generation: number } {
    if (!this.client) {
      this.generation++;
      this.open = false;
      const client: WsClient = createWsClient({
        url: this.opts.url,
        webSocketImpl: this.opts.webSocketImpl,
        lazy: true,
        retryAttempts: 0,
        shouldRetry: () => false,
        keepAlive: this.opts.keepAliveMs,
        connectionParams: async () => {
          const refresh = this.refreshNext;
          this.refreshNext = false;
          const auth = await bearer(this.opts.token, refresh);
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
    return { client: this.client, generation: this.generation };
  }

  private retire(generation: number, refresh: boolean): void {
    if (generation !== this.generation || !this.client) return;
    if (refresh) this.refreshNext = true;
    const old = this.client;
    this.client = null;
    this.open = false;
    quietly(old.dispose());
  }

  subscribe<R, V>(doc: Document<R, V>, variables: V, sink: StreamSink<R>): () => void {
    const { client, generation } = this.current();
    let ended = false;
    const fail = (err: ForkgraphError) => {
      if (ended) return;
      ended = true;
      if (isTokenError(err)) this.retire(generation, true);
      sink.error(err);
    };
    const stop = client.subscribe<unknown>(
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
  token?: TokenProvider;
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
 * connections mode); the token is read per stream, refreshed after a token error.
 */
export class SseStreams implements Streams {
  private readonly client: ReturnType<SSEClientFactory>;
  private refreshNext = false;
  private readonly connected = new Set<() => void>();

  constructor(opts: SseOptions) {
    this.client = opts.createClient({
      url: opts.url,
      fetchFn: opts.fetch,
      retryAttempts: 0,
      singleConnection: false,
      headers: async () => {
        const refresh = this.refreshNext;
        this.refreshNext = false;
        const auth = await bearer(opts.token, refresh);
        queueMicrotask(() => {
          for (const listener of [...this.connected]) listener();
        });
        const headers: Record<string, string> = {};
        if (auth) headers.authorization = auth;
        return headers;
      },
    });
  }

  subscribe<R, V>(doc: Document<R, V>, variables: V, sink: StreamSink<R>): () => void {
    let ended = false;
    const fail = (err: ForkgraphError) => {
      if (ended) return;
      ended = true;
      if (isTokenError(err)) this.refreshNext = true;
      sink.error(err);
    };
    const stop = this.client.subscribe(
      { query: String(doc), variables: variables as Record<string, unknown> },
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
