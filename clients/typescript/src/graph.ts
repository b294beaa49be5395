// A workspace's sessions with their forkability, kept live: the snapshot is read between
// workspaceEventCursor and the stream (so nothing falls between), then every event updates it.
// Turn events move fork buttons (providerForkBindingAvailable/State) and operation events move
// each turn's pendingForkOperation, without a reload.
import type { ForkgraphError } from './errors.js';
import {
  SessionNodeDocument,
  SessionTurnsPageDocument,
  SessionsPageDocument,
  TurnMessagesPageDocument,
  type SessionTurnsPageQuery,
  type SessionsPageQuery,
  type TurnMessagesPageFieldsFragment,
  type TurnMessagesPageQuery,
} from './generated/graphql.js';
import type { HttpTransport } from './http.js';
import { isPendingOperation, type ForkOperation, type Session, type Turn, type WorkspaceEvent } from './types.js';
import type { WatchStatus, WatchWorkspaceOptions, WorkspaceWatch } from './watch.js';

/** A session of the graph, with its latest turn. */
export type GraphSession = Session & { latestTurn: Turn | null };
type LoadedTurn = NonNullable<SessionTurnsPageQuery['session']>['turns']['edges'][number]['node'];
/** A message of a loaded turn. */
export type GraphMessage = TurnMessagesPageFieldsFragment['edges'][number]['node'];
/** A turn of a session whose turns were loaded, with all its messages (read page by page). */
export type GraphTurn = Omit<LoadedTurn, 'messagesConnection'> & { messages: GraphMessage[] };

/** What a SessionGraph holds; a new object after every change (compare by reference). */
export interface SessionGraphState {
  workspaceId: string;
  /** Whether the first snapshot is in. */
  loaded: boolean;
  /** Sessions by local id (deleted ones are removed). */
  sessions: Readonly<Record<string, GraphSession>>;
  /** Local ids in creation order. */
  order: readonly string[];
  /** Turns by session local id, for the sessions whose turns were asked for (loadTurns). */
  turns: Readonly<Record<string, readonly GraphTurn[]>>;
  /** The live stream's state. */
  live: WatchStatus;
  /** The last error (a failed load or a stream that ended); cleared by the next success. */
  error: ForkgraphError | null;
}

/** What a graph needs from its client. */
export interface GraphContext {
  http: HttpTransport;
  watch(opts: WatchWorkspaceOptions): WorkspaceWatch;
}

const PAGE = 100;
// Turns per page of SessionTurnsPage: each carries its first 50 messages, and the complexity limit
// counts a page's size times its selection (50 × 50 messages stays far under it).
const TURN_PAGE = 50;
const MESSAGE_PAGE = 200;
const MAX_PAGES = 50;

/**
 * SessionGraph keeps one workspace's sessions live. getState/subscribe fit React's
 * useSyncExternalStore (the React binding useSessionGraph uses them).
 */
export class SessionGraph {
  private state: SessionGraphState;
  private readonly ctx: GraphContext;
  private readonly listeners = new Set<() => void>();
  private readonly tracked = new Set<string>();
  private readonly reloading = new Map<string, { again: boolean }>();
  private readonly watch: WorkspaceWatch;

  constructor(ctx: GraphContext, workspaceId: string) {
    this.ctx = ctx;
    this.state = { workspaceId, loaded: false, sessions: {}, order: [], turns: {}, live: 'connecting', error: null };
    this.watch = ctx.watch({
      workspaceId,
      onSnapshot: () => this.loadSnapshot(),
      onEvent: (event) => this.apply(event),
      onStatus: (live) => this.set({ live }),
      onError: (error) => this.set({ error }),
    });
  }

  /** getState returns the current state. */
  getState = (): SessionGraphState => this.state;

  /** subscribe calls listener after every change; it returns the unsubscribe function. */
  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** The watch under the graph (its cursor, pause and resume). */
  get stream(): WorkspaceWatch {
    return this.watch;
  }

  /** loadTurns reads every turn of a session (with messages) and keeps them live from then on. */
  async loadTurns(sessionId: string): Promise<readonly GraphTurn[]> {
    this.tracked.add(sessionId);
    await this.reloadTurns(sessionId);
    return this.state.turns[sessionId] ?? [];
  }

  /** close ends the stream. */
  close(): void {
    this.watch.stop();
    this.listeners.clear();
  }

  private set(patch: Partial<SessionGraphState>): void {
    this.state = { ...this.state, ...patch };
    for (const l of [...this.listeners]) l();
  }

  private async loadSnapshot(): Promise<void> {
    const sessions: Record<string, GraphSession> = {};
    const order: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const data: SessionsPageQuery = await this.ctx.http.execute(SessionsPageDocument, { workspaceId: this.state.workspaceId, first: PAGE, after });
      for (const edge of data.sessions.edges) {
        sessions[edge.node.localId] = edge.node;
        order.push(edge.node.localId);
      }
      if (!data.sessions.pageInfo.hasNextPage) break;
      after = data.sessions.pageInfo.endCursor;
    }
    this.set({ sessions, order, loaded: true, error: null });
    await Promise.all([...this.tracked].map((id) => this.reloadTurns(id)));
  }

  // Reads of one session's turns coalesce: a call while one runs makes one more run after it.
  private async reloadTurns(sessionId: string): Promise<void> {
    const gate = this.reloading.get(sessionId);
    if (gate) {
      gate.again = true;
      return;
    }
    const mine = { again: true };
    this.reloading.set(sessionId, mine);
    try {
      while (mine.again) {
        mine.again = false;
        const turns: GraphTurn[] = [];
        let after: string | null = null;
        for (let page = 0; page < MAX_PAGES; page++) {
          const data: SessionTurnsPageQuery = await this.ctx.http.execute(SessionTurnsPageDocument, { workspaceId: this.state.workspaceId, id: sessionId, first: TURN_PAGE, after });
          if (!data.session) break;
          for (const { node } of data.session.turns.edges) turns.push(await this.withMessages(node));
          if (!data.session.turns.pageInfo.hasNextPage) break;
          after = data.session.turns.pageInfo.endCursor;
        }
        this.set({ turns: { ...this.state.turns, [sessionId]: turns } });
      }
    } catch (err) {
      this.set({ error: err as ForkgraphError });
    } finally {
      this.reloading.delete(sessionId);
    }
  }

  // withMessages is a loaded turn with every message: the first page came with it, the rest is
  // read through the turn's messagesConnection (the whole list is capped by the server).
  private async withMessages(loaded: LoadedTurn): Promise<GraphTurn> {
    const { messagesConnection, ...turn } = loaded;
    const messages = messagesConnection.edges.map((e) => e.node);
    let page: TurnMessagesPageFieldsFragment = messagesConnection;
    for (let n = 0; page.pageInfo.hasNextPage && n < MAX_PAGES * 10; n++) {
      const data: TurnMessagesPageQuery = await this.ctx.http.execute(TurnMessagesPageDocument, { id: turn.id, first: MESSAGE_PAGE, after: page.pageInfo.endCursor });
      if (!data.node || !('messagesConnection' in data.node)) break;
      page = data.node.messagesConnection;
      messages.push(...page.edges.map((e) => e.node));
    }
    return { ...turn, messages };
  }

  private upsertSession(session: GraphSession | Session): void {
    if (session.deletedAt) {
      this.removeSession(session.localId);
      return;
    }
    const prev = this.state.sessions[session.localId];
    // Fields the payload did not carry keep what an earlier read said.
    const next = { ...prev, ...session } as GraphSession;
    if (!('latestTurn' in session)) next.latestTurn = prev?.latestTurn ?? null;
    const order = prev ? this.state.order : [...this.state.order, session.localId];
    this.set({ sessions: { ...this.state.sessions, [session.localId]: next }, order });
  }

  private removeSession(id: string): void {
    if (!this.state.sessions[id]) return;
    const sessions = { ...this.state.sessions };
    delete sessions[id];
    this.set({ sessions, order: this.state.order.filter((x) => x !== id) });
  }

  private upsertTurn(turn: Turn): void {
    const session = this.state.sessions[turn.sessionId];
    if (session && (!session.latestTurn || session.latestTurn.localId === turn.localId || session.latestTurn.sequence < turn.sequence)) {
      this.set({ sessions: { ...this.state.sessions, [turn.sessionId]: { ...session, latestTurn: turn } } });
    }
    const turns = this.state.turns[turn.sessionId];
    if (!turns) return;
    const i = turns.findIndex((t) => t.localId === turn.localId);
    const next = i >= 0 ? turns.map((t, j) => (j === i ? { ...t, ...turn } : t)) : [...turns, { ...turn, messages: [] }].sort((a, b) => a.sequence - b.sequence);
    this.set({ turns: { ...this.state.turns, [turn.sessionId]: next } });
  }

  // An operation moves the pendingForkOperation of its boundary turn: set while it blocks the
  // boundary, cleared once it stops (acknowledged, failed).
  private applyOperation(op: ForkOperation): void {
    const sessionId = op.sourceSessionId;
    const pending = isPendingOperation(op) ? op : null;
    const patchTurn = <T extends Turn>(t: T): T => {
      if (t.localId !== op.throughTurnId) return t;
      if (!pending && t.pendingForkOperation && t.pendingForkOperation.localId !== op.localId) return t;
      return { ...t, pendingForkOperation: pending };
    };
    const session = this.state.sessions[sessionId];
    if (session?.latestTurn && session.latestTurn.localId === op.throughTurnId) {
      this.set({ sessions: { ...this.state.sessions, [sessionId]: { ...session, latestTurn: patchTurn(session.latestTurn) } } });
    }
    const turns = this.state.turns[sessionId];
    if (turns) this.set({ turns: { ...this.state.turns, [sessionId]: turns.map(patchTurn) } });
  }

  private apply(event: WorkspaceEvent): void {
    switch (event.kind) {
      case 'SESSION_UPSERTED':
        if (event.session) this.upsertSession(event.session);
        else if (event.sessionId) void this.readSession(event.sessionId);
        break;
      case 'SESSION_DELETED':
        if (event.sessionId) this.removeSession(event.sessionId);
        break;
      case 'TURN_UPSERTED':
        if (event.turn) this.upsertTurn(event.turn);
        // Messages are not in the event: a tracked session reads its turns again.
        if (event.sessionId && this.tracked.has(event.sessionId)) void this.reloadTurns(event.sessionId);
        break;
      case 'FORK_OPERATION_UPDATED':
        if (event.forkOperation) this.applyOperation(event.forkOperation);
        break;
    }
  }

  private async readSession(id: string): Promise<void> {
    try {
      const data = await this.ctx.http.execute(SessionNodeDocument, { workspaceId: this.state.workspaceId, id });
      if (data.session) this.upsertSession(data.session);
      else this.removeSession(id);
    } catch (err) {
      this.set({ error: err as ForkgraphError });
    }
  }
}
