// The fork flow of a client: one handle per boundary, the identity rules of the reference client
// (reuse while in flight, unknown or unacknowledged; fresh ids only after a confirmed failure or a
// finished acknowledgement), resume from the record store, and routing of workspace events.
import { ForkgraphError, asError } from './errors.js';
import { ForkHandle, type ForkContext } from './fork-handle.js';
import { boundaryKey, isResumable, type Boundary, type ForkRecord } from './records.js';
import { randomId } from './timing.js';
import type { ForkTarget, Session, Turn, WorkspaceEvent } from './types.js';

/** What forkThroughTurn needs: the boundary, and optionally what the caller knows of it. */
export interface ForkThroughTurnInput {
  workspaceId: string;
  /** The source session's local id (Session.localId, Turn.sessionId). */
  sessionId: string;
  /** The boundary turn's local id (Turn.localId). */
  turnId: string;
  /** The source session as read: its capabilities are checked before anything is sent. */
  session?: Pick<Session, 'kind' | 'deletedAt' | 'lifecycleCapabilities'> | null;
  /** The turn as read: its phase and forkability are checked before anything is sent. */
  turn?: Pick<Turn, 'phase' | 'providerForkBindingAvailable' | 'providerForkBindingState'> | null;
  /** A local id for the new session (fresh attempts only); omitted, a random one. */
  targetSessionId?: string;
  /**
   * The new session's settings overlay and prepared context (fresh attempts only: a fork that is
   * resumed keeps the target it was started with); omitted, the source's are copied.
   */
  target?: ForkTarget;
}

/**
 * forkRefusal says why a fork through turn of session cannot be attempted, or null when it can:
 * the session's provider cannot fork through a turn, it is not a root or deleted, or the turn is
 * not settled or its binding needs recovery. A source that is busy (an active turn) can be forked.
 */
export function forkRefusal(
  session: ForkThroughTurnInput['session'],
  turn: ForkThroughTurnInput['turn'],
): { reason: string; message: string } | null {
  if (session) {
    if (session.lifecycleCapabilities?.forkThroughTurn !== true) return { reason: 'fork_through_turn_unsupported', message: "the session's provider cannot fork through a turn" };
    if (session.kind !== 'ROOT') return { reason: 'source_not_root', message: 'only root sessions can be forked' };
    if (session.deletedAt) return { reason: 'source_deleted', message: 'the session was deleted' };
  }
  if (turn) {
    if (turn.phase !== 'SETTLED') return { reason: 'turn_not_settled', message: 'the turn is not settled' };
    if (turn.providerForkBindingState === 'RECOVERY_REQUIRED') return { reason: 'recovery_required', message: 'the provider cannot fork through this turn right now' };
    if (!turn.providerForkBindingAvailable) return { reason: 'provider_turn_unforkable', message: 'the provider cannot fork through this turn' };
  }
  return null;
}

/** Options of resumeForks. */
export interface ResumeOptions {
  /** Only this workspace's records. */
  workspaceId?: string;
}

/** How long a finished record (failed, acknowledged) is kept before resumeForks drops it. */
const FINISHED_RECORD_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * ForkManager holds the handles of one client. Internal: use the client's forkThroughTurn,
 * resumeForks, forkFor and forkRecord.
 */
export class ForkManager {
  private readonly ctx: Omit<ForkContext, 'changed'>;
  private readonly handles = new Map<string, ForkHandle>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly listeners = new Set<(handle: ForkHandle) => void>();
  private closed = false;

  constructor(ctx: Omit<ForkContext, 'changed'>) {
    this.ctx = ctx;
  }

  private context(): ForkContext {
    return { ...this.ctx, changed: (h) => this.listeners.forEach((l) => l(h)) };
  }

  /** onChange calls listener after every change of any handle (and for each new one). */
  onChange(listener: (handle: ForkHandle) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** serialize runs fn after every earlier call for key, so one client never mints two identities. */
  private serialize<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(key) ?? Promise.resolve();
    const next = prev.catch(() => undefined).then(fn);
    this.locks.set(key, next);
    void next.finally(() => {
      if (this.locks.get(key) === next) this.locks.delete(key);
    }).catch(() => undefined);
    return next;
  }

  /** See ForkgraphClient.forkThroughTurn. */
  forkThroughTurn(input: ForkThroughTurnInput): Promise<ForkHandle> {
    if (this.closed) return Promise.reject(new ForkgraphError('the client is closed', { code: 'CLIENT_CLOSED' }));
    const boundary: Boundary = { workspaceId: input.workspaceId, sourceSessionId: input.sessionId, turnId: input.turnId };
    const key = boundaryKey(boundary);
    return this.serialize(key, async () => {
      const live = this.handles.get(key);
      if (live?.active) {
        live.start();
        return live;
      }
      const stored = await this.ctx.store.get(key);
      if (stored && isResumable(stored)) return this.adopt(stored, true);
      const refusal = forkRefusal(input.session, input.turn);
      if (refusal) throw new ForkgraphError(`cannot fork through turn ${input.turnId}: ${refusal.message}`, { code: 'FORK_NOT_ALLOWED', reason: refusal.reason });
      const now = Date.now();
      const { environment, providerTargetRef, ...kept } = input.target ?? {};
      const record: ForkRecord = {
        version: 1,
        ...boundary,
        requestId: randomId(),
        targetSessionId: input.targetSessionId ?? randomId(),
        operationId: null,
        status: 'inFlight',
        phase: null,
        ack: 'idle',
        ackAttempts: 0,
        ackError: null,
        error: null,
        adopted: false,
        target: input.target ? kept : null,
        createdAt: now,
        updatedAt: now,
      };
      // Written before the request leaves: a reload from here on resumes this identity.
      await this.ctx.store.set(key, record);
      return this.adopt(record, false, { environment, providerTargetRef });
    });
  }

  private adopt(record: ForkRecord, resumed: boolean, dispatchOnly?: Pick<ForkTarget, 'environment' | 'providerTargetRef'>): ForkHandle {
    const handle = new ForkHandle(this.context(), record, resumed, dispatchOnly);
    this.handles.get(handle.key)?.stop();
    this.handles.set(handle.key, handle);
    handle.start();
    this.listeners.forEach((l) => l(handle));
    return handle;
  }

  /** See ForkgraphClient.resumeForks. */
  async resumeForks(options: ResumeOptions = {}): Promise<ForkHandle[]> {
    const records = await this.ctx.store.list();
    const out: ForkHandle[] = [];
    const now = Date.now();
    for (const r of records) {
      if (options.workspaceId !== undefined && r.workspaceId !== options.workspaceId) continue;
      const key = boundaryKey(r);
      if (!isResumable(r)) {
        if (now - r.updatedAt > FINISHED_RECORD_TTL_MS) await this.ctx.store.delete(key);
        continue;
      }
      const handle = await this.resume(r);
      if (handle) out.push(handle);
    }
    return out;
  }

  /**
   * resume returns the live handle of boundary, or resumes its stored record when that must go
   * on (in flight, unknown, acknowledgement not done); null when there is neither.
   */
  resume(boundary: Boundary): Promise<ForkHandle | null> {
    const key = boundaryKey(boundary);
    return this.serialize(key, async () => {
      const live = this.handles.get(key);
      if (live?.active) return live;
      const stored = await this.ctx.store.get(key);
      if (!stored || !isResumable(stored)) return live ?? null;
      return this.adopt(stored, true);
    });
  }

  /** forkFor returns this client's handle for boundary (running or finished), or null. */
  forkFor(boundary: Boundary): ForkHandle | null {
    return this.handles.get(boundaryKey(boundary)) ?? null;
  }

  /** record reads the stored record of boundary. */
  async record(boundary: Boundary): Promise<ForkRecord | null> {
    return this.ctx.store.get(boundaryKey(boundary));
  }

  /**
   * onEvent routes a workspace event to the handles it concerns: an operation update to the
   * handle following that operation, a new child session to the handle that made it.
   */
  onEvent(event: WorkspaceEvent): void {
    for (const handle of this.handles.values()) {
      if (!handle.active) continue;
      const state = handle.state;
      if (state.workspaceId !== (event.session?.workspaceId ?? event.forkOperation?.workspaceId ?? state.workspaceId)) continue;
      const op = event.forkOperation;
      if (op && (op.localId === state.operationId || (state.operationId === null && op.requestId === state.requestId))) {
        handle.applyOperation(op, false);
        handle.nudge();
      }
      if (event.kind === 'SESSION_UPSERTED' && event.session?.forkedFrom) handle.observeChild(event.session);
    }
  }

  /** close stops every handle; records stay in the store for the next client. */
  close(): void {
    this.closed = true;
    for (const h of this.handles.values()) h.stop();
  }

  /** flushed resolves once every handle's record writes have reached the store. */
  async flushed(): Promise<void> {
    await Promise.all([...this.handles.values()].map((h) => h.flushed()));
  }

  /** report passes an error nobody awaits to the client's onError. */
  report(err: unknown): void {
    this.ctx.report(asError(err));
  }
}
