// The client: HTTP for queries and mutations, one stream transport, the fork flow, workspace
// watches and session graphs, all over one token provider.
import { ForkgraphError, asError } from './errors.js';
import { DEFAULT_FORK_TIMING, type ForkHandle, type ForkTiming } from './fork-handle.js';
import { ForkManager, type ForkThroughTurnInput, type ResumeOptions } from './forks.js';
import {
  AbandonForkOperationDocument,
  AcknowledgeForkOperationDocument,
  ReconcileForkOperationDocument,
} from './generated/graphql.js';
import { SessionGraph } from './graph.js';
import { Credentials, HttpTransport, type Document, type RequestOptions, type TokenProvider } from './http.js';
import { MemoryForkRecordStore, type Boundary, type ForkRecord, type ForkRecordStore } from './records.js';
import { SseStreams, WsStreams, type SSEClientFactory, type StreamSink, type Streams } from './streams.js';
import type { Schedule } from './timing.js';
import type { ForkResult, WorkspaceEvent } from './types.js';
import { startWatch, type WatchWorkspaceOptions, type WorkspaceWatch } from './watch.js';

/** Options of createForkgraphClient. */
export interface ForkgraphClientOptions {
  /**
   * The GraphQL endpoint over HTTP, e.g. http://127.0.0.1:8080/graphql, or a path such as
   * `/graphql`, resolved against the page's location.
   */
  url: string;
  /** The websocket endpoint; default: url (resolved) with ws: / wss:. */
  wsUrl?: string;
  /** A static API token, or a provider called before each request and connection (see TokenProvider). */
  token?: string | TokenProvider;
  /** Extra HTTP headers for queries and mutations. */
  headers?: Record<string, string>;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Subscriptions over 'ws' (graphql-ws, the default), 'sse' (graphql-sse; give sseClient), or 'none' (polling only). */
  subscriptions?: 'ws' | 'sse' | 'none';
  /** graphql-sse's createClient, for subscriptions: 'sse'. */
  sseClient?: SSEClientFactory;
  /** A WebSocket implementation where there is no global one (Node 20: `ws`). */
  webSocketImpl?: unknown;
  /** Where fork records are kept (default: memory). Browsers: new WebStorageForkRecordStore(). */
  forkStore?: ForkRecordStore;
  /** The fork flow's pauses and bounds (defaults: DEFAULT_FORK_TIMING). */
  forkTiming?: Partial<ForkTiming>;
  /** Pauses before a workspace watch resubscribes (default 250, 500, 1000, 2000, 5000 ms). */
  streamRetryDelaysMs?: Schedule;
  /** Bound on one HTTP request (default 15 s); past it the request counts as cut. */
  requestTimeoutMs?: number;
  /** Websocket keep-alive ping interval (default 10 s). */
  keepAliveMs?: number;
  /** Told of errors no call awaits (a record store that cannot write). Default: console.warn. */
  onError?: (err: Error) => void;
}

/**
 * ForkgraphClient is forkgraph's client for frontends: typed queries and mutations, the fork
 * saga (forkThroughTurn), the workspace stream (watchWorkspace) and live session graphs.
 */
export class ForkgraphClient {
  /** The HTTP transport (typed documents: client.http.execute(doc, variables)). */
  readonly http: HttpTransport;
  private readonly streams: Streams | null;
  private readonly forks: ForkManager;
  private readonly retryDelays: Schedule;
  private readonly watches = new Set<WorkspaceWatch>();
  private readonly eventListeners = new Set<(event: WorkspaceEvent) => void>();
  private closed = false;

  constructor(options: ForkgraphClientOptions) {
    const token: TokenProvider | undefined = typeof options.token === 'string' ? () => options.token as string : options.token;
    const report = options.onError ?? ((err: Error) => console.warn(`forkgraph client: ${err.message}`));
    const credentials = new Credentials(token);
    const url = resolveUrl(options.url);
    this.http = new HttpTransport({ url, fetch: options.fetch, token, headers: options.headers, timeoutMs: options.requestTimeoutMs ?? 15000 }, credentials);
    const kind = options.subscriptions ?? 'ws';
    if (kind === 'sse') {
      if (!options.sseClient) throw new Error("subscriptions: 'sse' needs sseClient (graphql-sse's createClient)");
      this.streams = new SseStreams({ url, credentials, createClient: options.sseClient, fetch: options.fetch });
    } else if (kind === 'ws') {
      const wsUrl = options.wsUrl ? resolveUrl(options.wsUrl) : url.replace(/^http/, 'ws');
      this.streams = new WsStreams({ url: wsUrl, credentials, webSocketImpl: options.webSocketImpl, keepAliveMs: options.keepAliveMs ?? 10000 });
    } else {
      this.streams = null;
    }
    this.retryDelays = options.streamRetryDelaysMs ?? [250, 500, 1000, 2000, 5000];
    this.forks = new ForkManager({
      http: this.http,
      streams: this.streams,
      store: options.forkStore ?? new MemoryForkRecordStore(),
      timing: { ...DEFAULT_FORK_TIMING, ...options.forkTiming },
      report,
    });
  }

  /** request runs a typed query or mutation over HTTP. Errors: ForkgraphError (server codes), TransportError. */
  request<R, V>(doc: Document<R, V>, variables: V, options?: RequestOptions): Promise<R> {
    return this.http.execute(doc, variables, options);
  }

  /** subscribe runs a typed subscription on the client's stream transport; it returns the unsubscribe function. */
  subscribe<R, V>(doc: Document<R, V>, variables: V, sink: StreamSink<R>): () => void {
    if (!this.streams) throw new ForkgraphError("this client has no subscriptions (subscriptions: 'none')", { code: 'NO_STREAMS' });
    return this.streams.subscribe(doc, variables, sink);
  }

  /**
   * forkThroughTurn forks session sessionId through turn turnId and returns the handle that
   * follows it to the end. While this boundary has an attempt in flight, unknown, or committed
   * with its acknowledgement not done, that attempt is returned (resumed from the record store
   * after a reload) instead of a new one; only after a confirmed failure, or once acknowledged,
   * does a call start a new attempt with fresh ids. Errors: FORK_NOT_ALLOWED (reason) when the
   * given session or turn says the fork cannot be made; the server's refusals (FORK_CONFLICT,
   * FORK_UNSUPPORTED, ...) arrive as the handle's failed state, not as a rejection.
   */
  forkThroughTurn(input: ForkThroughTurnInput): Promise<ForkHandle> {
    return this.forks.forkThroughTurn(input);
  }

  /**
   * resumeForks resumes every stored attempt that is not over (in flight, unknown, or an
   * acknowledgement not done), e.g. after a page reload, and returns their handles.
   */
  resumeForks(options?: ResumeOptions): Promise<ForkHandle[]> {
    return this.forks.resumeForks(options);
  }

  /** resumeFork resumes the stored attempt on boundary when it is not over; null when there is none. */
  resumeFork(boundary: Boundary): Promise<ForkHandle | null> {
    return this.forks.resume(boundary);
  }

  /** forkFor returns this client's handle on boundary, or null. */
  forkFor(boundary: Boundary): ForkHandle | null {
    return this.forks.forkFor(boundary);
  }

  /** forkRecord reads the stored record of boundary. */
  forkRecord(boundary: Boundary): Promise<ForkRecord | null> {
    return this.forks.record(boundary);
  }

  /** onForkChange calls listener after every change of any fork handle; it returns the unregister function. */
  onForkChange(listener: (handle: ForkHandle) => void): () => void {
    return this.forks.onChange(listener);
  }

  /**
   * acknowledgeOperation acknowledges a committed operation this client did not start (one a
   * turn's pendingForkOperation shows). Errors: NOT_FOUND, ACKNOWLEDGE_CONFLICT.
   */
  async acknowledgeOperation(workspaceId: string, id: string): Promise<ForkResult> {
    const data = await this.http.execute(AcknowledgeForkOperationDocument, { workspaceId, id });
    return data.acknowledgeForkOperation;
  }

  /** reconcileOperation asks now what became of an unknown delivery. Errors: NOT_FOUND, RECONCILE_CONFLICT. */
  async reconcileOperation(workspaceId: string, id: string): Promise<ForkResult> {
    const data = await this.http.execute(ReconcileForkOperationDocument, { workspaceId, id });
    return data.reconcileForkOperation;
  }

  /** abandonOperation stops waiting for an unknown delivery. Errors: BAD_USER_INPUT, NOT_FOUND, RECONCILE_CONFLICT. */
  async abandonOperation(workspaceId: string, id: string, reason: string): Promise<ForkResult> {
    const data = await this.http.execute(AbandonForkOperationDocument, { workspaceId, id, reason });
    return data.abandonForkOperation;
  }

  /**
   * watchWorkspace follows workspaceEvents: without `after`, it reads workspaceEventCursor,
   * awaits onSnapshot, and subscribes after that cursor; it resumes after the last cursor
   * received whenever the stream ends (disconnect, RESUME_REQUIRED, a refreshed token). Its
   * events also reach the fork flow (a child seen this way is acknowledged).
   */
  watchWorkspace(options: WatchWorkspaceOptions): WorkspaceWatch {
    if (!this.streams) throw new ForkgraphError("this client has no subscriptions (subscriptions: 'none')", { code: 'NO_STREAMS' });
    if (this.closed) throw new ForkgraphError('the client is closed', { code: 'CLIENT_CLOSED' });
    const watch = startWatch(
      { http: this.http, streams: this.streams, retryDelaysMs: this.retryDelays, route: (e) => this.route(e) },
      {
        ...options,
        onStatus: (s) => {
          if (s === 'stopped') this.watches.delete(watch);
          options.onStatus?.(s);
        },
      },
    );
    this.watches.add(watch);
    return watch;
  }

  /** sessionGraph keeps workspaceId's sessions, forkability and pending forks live; close() it when done. */
  sessionGraph(workspaceId: string): SessionGraph {
    return new SessionGraph({ http: this.http, watch: (o) => this.watchWorkspace(o) }, workspaceId);
  }

  /** onWorkspaceEvent sees every event of every watch of this client. */
  onWorkspaceEvent(listener: (event: WorkspaceEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  private route(event: WorkspaceEvent): void {
    this.forks.onEvent(event);
    for (const l of [...this.eventListeners]) {
      try {
        l(event);
      } catch (err) {
        this.forks.report(asError(err));
      }
    }
  }

  /** flushed resolves once every fork record change so far is in the store. */
  flushed(): Promise<void> {
    return this.forks.flushed();
  }

  /**
   * close stops every watch, fork handle and connection. Fork records stay in their store, so a
   * new client over the same store resumes them (what a page reload does).
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of [...this.watches]) w.stop();
    this.forks.close();
    this.streams?.dispose();
  }
}

/**
 * resolveUrl resolves a path such as `/graphql` against the page's location, so the websocket
 * URL derived from it is absolute (not every browser's WebSocket takes a relative one); outside
 * a page it is returned as it is.
 */
function resolveUrl(url: string): string {
  const base = (globalThis as { location?: { href?: unknown } }).location?.href;
  if (typeof base !== 'string' || !base) return url;
  try {
    return new URL(url, base).href;
  } catch {
    return url;
  }
}

/** createForkgraphClient returns a client for the server at options.url. */
export function createForkgraphClient(options: ForkgraphClientOptions): ForkgraphClient {
  return new ForkgraphClient(options);
}
