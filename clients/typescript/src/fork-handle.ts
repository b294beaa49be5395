// One fork attempt on one boundary, driven to its end by a single loop: submit (replayed with the
// same identity until an answer arrives), follow the operation (stream, polling as fallback),
// wait out an unknown delivery, and acknowledge the committed child exactly once. Everything that
// happens elsewhere (workspace events, user actions, a late POST answer) only changes the state
// and wakes the loop, so no two steps ever run at once for one boundary.
import { ForkgraphError, TransportError, asError } from './errors.js';
import {
  AbandonForkOperationDocument,
  AcknowledgeForkOperationDocument,
  ForkOperationDocument,
  ForkOperationUpdatedDocument,
  ForkSessionDocument,
  ReconcileForkOperationDocument,
  type ForkSessionInput,
  type ForkTargetInput,
} from './generated/graphql.js';
import type { HttpTransport } from './http.js';
import { boundaryKey, type Boundary, type ForkErrorInfo, type ForkRecord, type ForkRecordStore } from './records.js';
import type { Streams } from './streams.js';
import { Wake, delayAt, timeKey, type Schedule } from './timing.js';
import type { ForkResult, Session } from './types.js';

/** The part of a fork's target that is sent and never stored. */
type DispatchOnly = Pick<ForkTargetInput, 'environment' | 'providerTargetRef'>;

function definedOnly(d: DispatchOnly): DispatchOnly {
  const out: DispatchOnly = {};
  if (d.environment) out.environment = d.environment;
  if (d.providerTargetRef) out.providerTargetRef = d.providerTargetRef;
  return out;
}

/** The pauses and bounds of the fork flow (milliseconds). */
export interface ForkTiming {
  /** Between reads of an ACCEPTED operation when its stream is down (upstream: 0, 200, 500, 1000, 2000). */
  pollDelaysMs: Schedule;
  /** Before sending a cut fork request again, with the same identity. */
  requestRetryDelaysMs: Schedule;
  /** Between acknowledgement attempts (upstream: 1 s, 2 s, 5 s, 10 s, then 30 s). */
  ackRetryDelaysMs: Schedule;
  /** Bound on one acknowledgement request (upstream: 10 s). */
  ackTimeoutMs: number;
  /** Between reads of an operation whose delivery is unknown (the server reconciles it meanwhile). */
  unknownPollDelaysMs: Schedule;
  /** Consecutive failed reads after which the attempt counts as delivery-unknown and is replayed. */
  maxReadFailures: number;
  /** Retries of a retryable refusal (FORK_IN_PROGRESS, PROVIDER_UNAVAILABLE, RATE_LIMITED) before it counts as failed. */
  maxRetryableRefusals: number;
}

/** DEFAULT_FORK_TIMING follows the reference client's schedules. */
export const DEFAULT_FORK_TIMING: ForkTiming = {
  pollDelaysMs: [0, 200, 500, 1000, 2000],
  requestRetryDelaysMs: [250, 500, 1000, 2000, 5000],
  ackRetryDelaysMs: [1000, 2000, 5000, 10000, 30000],
  ackTimeoutMs: 10000,
  unknownPollDelaysMs: [2000, 5000, 10000, 30000],
  maxReadFailures: 3,
  maxRetryableRefusals: 5,
};

/** ForkState is a handle's state: its record, plus the latest operation and the child once seen. */
export interface ForkState extends Omit<ForkRecord, 'version'> {
  /** The store key of the boundary. */
  key: string;
  /** The latest operation the server sent, or null before its first answer. */
  operation: ForkResult | null;
  /** The new session, once the client has seen it. */
  child: Session | null;
  /** The loop is still driving this attempt (false once failed, acknowledged, halted or closed). */
  running: boolean;
}

/** What a handle needs from its client. */
export interface ForkContext {
  http: HttpTransport;
  streams: Streams | null;
  store: ForkRecordStore;
  timing: ForkTiming;
  /** Told of every state change (the manager fans it out to hooks). */
  changed(handle: ForkHandle): void;
  /** Told of errors nobody awaits (a store that fails to write). */
  report(err: Error): void;
}

type Listener = (state: ForkState) => void;

function errorInfo(err: unknown): ForkErrorInfo {
  if (err instanceof ForkgraphError) return { code: err.code, message: err.message, reason: err.reason };
  return { code: 'CLIENT_ERROR', message: asError(err).message, reason: null };
}

const requestUnknown = (err: unknown): ForkErrorInfo => ({
  code: 'REQUEST_UNKNOWN',
  message: `the fork request's answer was lost; it is sent again with the same identity (${asError(err).message})`,
  reason: null,
});

/** validChild returns the committed operation's session when it is the child the operation made. */
export function validChild(op: ForkResult): Session | null {
  const s = op.session;
  const from = s?.forkedFrom;
  if (!s || !from) return null;
  const ok = s.localId === op.targetSessionId && s.workspaceId === op.workspaceId && from.operationId === op.localId &&
    from.sourceSessionId === op.sourceSessionId && from.sourceTurnId === op.throughTurnId && Boolean(from.targetTurnId);
  return ok ? s : null;
}

/**
 * ForkHandle follows one fork attempt. Read `state`, `subscribe` to changes, await `settled()`;
 * `reconcile` and `abandon` act on an unknown delivery, `acknowledge` retries a pending
 * acknowledgement now. Get one from `client.forkThroughTurn` or `client.resumeForks`.
 */
export class ForkHandle {
  private rec: ForkRecord;
  private operation: ForkResult | null = null;
  private child: Session | null = null;
  private readonly ctx: ForkContext;
  private readonly listeners = new Set<Listener>();
  private readonly wake = new Wake();
  private readonly abort = new AbortController();
  private running = false;
  private halted = false;
  private resubmit: boolean;
  private submitAttempt = 0;
  private refusals = 0;
  private pollAttempt = 0;
  private unknownAttempt = 0;
  private readFailures = 0;
  private streamFailures = 0;
  private writes: Promise<void> = Promise.resolve();
  private finished: Promise<ForkState>;
  private finish!: (state: ForkState) => void;
  private readonly dispatchOnly: DispatchOnly;

  /**
   * Internal: the manager creates handles. resumed says the record came from the store;
   * dispatchOnly is the target's environment and provider target ref, kept in memory only.
   */
  constructor(ctx: ForkContext, record: ForkRecord, resumed: boolean, dispatchOnly?: DispatchOnly) {
    this.ctx = ctx;
    this.rec = record;
    this.dispatchOnly = dispatchOnly ?? {};
    // A resumed attempt is sent again first: the replay of its request id is the cheapest way to
    // learn what became of it (and adopts whatever the server holds for that identity).
    this.resubmit = resumed || record.operationId === null;
    this.finished = new Promise((resolve) => (this.finish = resolve));
  }

  /** The boundary this handle forks through. */
  get boundary(): Boundary {
    return { workspaceId: this.rec.workspaceId, sourceSessionId: this.rec.sourceSessionId, turnId: this.rec.turnId };
  }

  /** The store key of the boundary. */
  get key(): string {
    return boundaryKey(this.boundary);
  }

  /** The current state (a fresh object per change). */
  get state(): ForkState {
    const { version: _version, ...rest } = this.rec;
    return { ...rest, key: this.key, operation: this.operation, child: this.child, running: this.running };
  }

  /** Whether a new fork on this boundary must reuse this attempt (in flight, unknown, ack not done). */
  get active(): boolean {
    return this.rec.status !== 'failed' && this.rec.ack !== 'acknowledged' && !this.halted;
  }

  /** subscribe calls listener after every change; it returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** settled resolves when the attempt is over: failed, or succeeded and acknowledged (or halted). */
  settled(): Promise<ForkState> {
    return this.finished;
  }

  /** until resolves with the first state that satisfies predicate (checked now and after each change). */
  until(predicate: (state: ForkState) => boolean, signal?: AbortSignal): Promise<ForkState> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const s = this.state;
        if (!predicate(s)) return false;
        off();
        signal?.removeEventListener('abort', onAbort);
        resolve(s);
        return true;
      };
      const onAbort = () => {
        off();
        reject(asError(signal?.reason ?? new Error('aborted')));
      };
      const off = this.subscribe(() => void check());
      if (check()) return;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Internal: start drives the attempt unless it already runs or is over. */
  start(): void {
    if (this.running || !this.active || this.abort.signal.aborted) return;
    this.running = true;
    void this.drive().catch((err) => this.ctx.report(asError(err)));
  }

  /** Internal: stop ends the loop (the client closed); the record stays for a later resume. */
  stop(): void {
    this.abort.abort();
    this.wake.notify();
  }

  /**
   * acknowledge sends a pending acknowledgement now instead of at its next retry. It resolves
   * with the state once acknowledged (or the attempt is otherwise over).
   */
  acknowledge(): Promise<ForkState> {
    this.halted = false;
    this.start();
    this.wake.notify();
    return this.until((s) => s.ack === 'acknowledged' || s.status === 'failed' || !s.running);
  }

  /**
   * reconcile asks the server to ask the provider now what became of an unknown delivery, and
   * applies the answer. Errors: NOT_FOUND; a RECONCILE_CONFLICT (the operation moved on) is not
   * an error: the operation is read again.
   */
  reconcile(): Promise<ForkState> {
    return this.act((id) => this.ctx.http.execute(ReconcileForkOperationDocument, { workspaceId: this.rec.workspaceId, id }).then((d) => d.reconcileForkOperation));
  }

  /**
   * abandon stops waiting for an unknown delivery (the operation becomes FAILED, errorReason
   * `abandoned`): the boundary is free, and a child the provider did make is orphaned. Errors:
   * BAD_USER_INPUT (invalid_reason), NOT_FOUND; a RECONCILE_CONFLICT reads the operation again.
   */
  abandon(reason: string): Promise<ForkState> {
    return this.act((id) => this.ctx.http.execute(AbandonForkOperationDocument, { workspaceId: this.rec.workspaceId, id, reason }).then((d) => d.abandonForkOperation));
  }

  private async act(call: (operationId: string) => Promise<ForkResult>): Promise<ForkState> {
    const id = this.rec.operationId;
    if (!id) throw new ForkgraphError('the fork has no operation yet', { code: 'NO_OPERATION' });
    try {
      this.applyOperation(await call(id), false);
    } catch (err) {
      if (!(err instanceof ForkgraphError) || err.code !== 'RECONCILE_CONFLICT') throw err;
      await this.read(id);
    }
    this.start();
    this.wake.notify();
    return this.state;
  }

  /**
   * Internal: applyOperation takes an operation the server sent (fork answer, stream, event,
   * mutation). fromSubmit marks the answer to this handle's own request, the only one whose other
   * identity is adopted: the server's barrier answers a new request id with the boundary's
   * pending operation, and the client then follows that one.
   */
  applyOperation(op: ForkResult, fromSubmit: boolean): void {
    const r = this.rec;
    if (op.workspaceId !== r.workspaceId) return;
    const same = r.operationId === op.localId;
    if (!same && !fromSubmit && !(r.operationId === null && op.requestId === r.requestId)) return;
    if (same && this.operation && timeKey(op.updatedAt) < timeKey(this.operation.updatedAt)) return; // older news
    // Any answer about our identity says what became of a request whose answer was lost.
    if (op.requestId === r.requestId || same) this.resubmit = false;
    const adopt = op.requestId !== r.requestId || op.targetSessionId !== r.targetSessionId;
    const next: Partial<ForkRecord> = {
      operationId: op.localId,
      requestId: op.requestId,
      targetSessionId: op.targetSessionId,
      phase: op.phase,
      adopted: r.adopted || adopt,
    };
    this.operation = op.session === undefined ? { ...op, session: this.operation?.session ?? null, lineage: this.operation?.lineage ?? null } : op;
    const done = r.status === 'succeeded' || r.status === 'failed';
    switch (op.status) {
      case 'ACCEPTED':
        if (!done) Object.assign(next, { status: 'inFlight', error: null });
        break;
      case 'COMMITTED': {
        const child = validChild(op);
        if (child) this.child = child;
        if (op.acknowledgedAt) next.ack = 'acknowledged';
        else if (r.ack === 'idle') next.ack = 'pending';
        if (r.status !== 'failed' && (this.child || op.acknowledgedAt)) Object.assign(next, { status: 'succeeded', error: null });
        else if (!done) Object.assign(next, { status: 'inFlight', error: null });
        break;
      }
      case 'FAILED':
        if (r.status !== 'succeeded') {
          Object.assign(next, { status: 'failed', error: { code: 'FORK_FAILED', message: op.error ?? 'the fork failed', reason: op.errorReason } });
        }
        break;
      case 'UNKNOWN':
        if (!done) Object.assign(next, { status: 'unknown', error: { code: 'DELIVERY_UNKNOWN', message: op.error ?? 'the provider fork delivery is unknown', reason: op.errorReason } });
        break;
    }
    this.update(next);
  }

  /**
   * Internal: observeChild takes a session a workspace event brought. The child of this attempt
   * (forkedFrom names its operation, or its target before the operation id is known) makes the
   * attempt succeeded, which the loop acknowledges once; a repeated upsert changes nothing more.
   */
  observeChild(session: Session): void {
    const from = session.forkedFrom;
    const r = this.rec;
    if (!from || session.workspaceId !== r.workspaceId) return;
    const matches = r.operationId !== null ? from.operationId === r.operationId : session.localId === r.targetSessionId;
    if (!matches || r.status === 'failed') return;
    this.child = session;
    if (r.status === 'succeeded') {
      this.emit();
      return;
    }
    this.update({
      status: 'succeeded',
      error: null,
      phase: 'COMMITTED',
      operationId: from.operationId,
      targetSessionId: session.localId,
      ack: r.ack === 'idle' ? 'pending' : r.ack,
    });
    this.wake.notify();
  }

  /** Internal: nudge wakes the loop (an event about this operation arrived). */
  nudge(): void {
    this.wake.notify();
  }

  private update(patch: Partial<ForkRecord>): void {
    this.rec = { ...this.rec, ...patch, updatedAt: Date.now() };
    const snapshot = this.rec;
    this.writes = this.writes
      .then(() => this.ctx.store.set(this.key, snapshot))
      .catch((err) => this.ctx.report(new Error(`fork record ${this.key}: ${asError(err).message}`)));
    this.emit();
  }

  private emit(): void {
    const s = this.state;
    for (const l of [...this.listeners]) l(s);
    this.ctx.changed(this);
  }

  /** flushed resolves once every record write so far has reached the store. */
  flushed(): Promise<void> {
    return this.writes;
  }

  private async drive(): Promise<void> {
    const signal = this.abort.signal;
    try {
      while (!signal.aborted && this.active) {
        // A child seen proves the fork: a request whose answer was lost need not be sent again.
        if (this.rec.status === 'succeeded') {
          this.resubmit = false;
          await this.acknowledgeOnce(signal);
        } else if (this.resubmit) await this.submit(signal);
        else if (this.rec.status === 'unknown') await this.waitUnknown(signal);
        else await this.follow(signal);
      }
    } finally {
      this.running = false;
      this.emit();
      if (!this.active) void this.writes.then(() => this.finish(this.state));
    }
  }

  private async submit(signal: AbortSignal): Promise<void> {
    const r = this.rec;
    const input: ForkSessionInput = { workspaceId: r.workspaceId, sourceSessionId: r.sourceSessionId, throughTurnId: r.turnId, requestId: r.requestId, targetSessionId: r.targetSessionId };
    // The stored target is resent as it was (the request's identity); the dispatch-only values
    // only by the handle that was given them (a resumed fork has none, which the server allows).
    if (r.target) input.target = { ...r.target, ...definedOnly(this.dispatchOnly) };
    try {
      const data = await this.ctx.http.execute(ForkSessionDocument, { input }, { signal });
      this.resubmit = false;
      this.submitAttempt = 0;
      this.refusals = 0;
      this.readFailures = 0;
      this.applyOperation(data.forkSession, true);
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof TransportError) {
        // The server may have the fork: never fresh ids, the same request again after a pause.
        this.update({ status: this.rec.status === 'succeeded' ? 'succeeded' : 'unknown', error: requestUnknown(err) });
        await this.wake.wait(delayAt(this.ctx.timing.requestRetryDelaysMs, this.submitAttempt++), signal);
        return;
      }
      if (err instanceof ForkgraphError && err.retryable && this.refusals < this.ctx.timing.maxRetryableRefusals) {
        // Refused for now (FORK_IN_PROGRESS, PROVIDER_UNAVAILABLE, RATE_LIMITED): nothing was created.
        this.update({ error: errorInfo(err) });
        await this.wake.wait(delayAt(this.ctx.timing.requestRetryDelaysMs, this.refusals++), signal);
        return;
      }
      // A refusal: no operation exists for this identity, so the next attempt mints fresh ids.
      this.resubmit = false;
      this.update({ status: 'failed', error: errorInfo(err) });
    }
  }

  private async follow(signal: AbortSignal): Promise<void> {
    const id = this.rec.operationId!;
    if (this.ctx.streams && this.streamFailures < this.ctx.timing.maxReadFailures) {
      const outcome = await this.followStream(id, signal);
      if (outcome === 'changed' || signal.aborted) return;
      this.streamFailures++;
    }
    await this.wake.wait(delayAt(this.ctx.timing.pollDelaysMs, this.pollAttempt++), signal);
    if (signal.aborted || this.rec.status !== 'inFlight' || this.resubmit) return;
    await this.read(id, signal);
  }

  /** read fetches the operation once; after maxReadFailures failures in a row the attempt is replayed. */
  private async read(id: string, signal?: AbortSignal): Promise<void> {
    try {
      const data = await this.ctx.http.execute(ForkOperationDocument, { workspaceId: this.rec.workspaceId, id }, { signal });
      this.readFailures = 0;
      if (data.forkOperation) this.applyOperation(data.forkOperation, false);
      else this.update({ status: 'failed', error: { code: 'NOT_FOUND', message: `fork operation ${id} no longer exists`, reason: null } });
    } catch (err) {
      if (signal?.aborted) return;
      if (++this.readFailures >= this.ctx.timing.maxReadFailures) {
        this.resubmit = true;
        this.readFailures = 0;
        if (this.rec.status !== 'succeeded') this.update({ status: 'unknown', error: requestUnknown(err) });
      }
    }
  }

  /** followStream follows forkOperationUpdated until the attempt leaves inFlight or the stream ends. */
  private followStream(id: string, signal: AbortSignal): Promise<'changed' | 'ended'> {
    return new Promise((resolve) => {
      let settled = false;
      const end = (outcome: 'changed' | 'ended') => {
        if (settled) return;
        settled = true;
        stop();
        off();
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const moved = () => this.rec.status !== 'inFlight' || this.child !== null || this.resubmit;
      const onAbort = () => end('ended');
      const off = this.subscribe(() => {
        if (moved()) end('changed');
      });
      const stop = this.ctx.streams!.subscribe(ForkOperationUpdatedDocument, { workspaceId: this.rec.workspaceId, id }, {
        next: (data) => {
          this.streamFailures = 0;
          this.pollAttempt = 0;
          this.applyOperation(data.forkOperationUpdated, false);
        },
        error: (err) => {
          if (err.code === 'NOT_FOUND') this.update({ status: 'failed', error: errorInfo(err) });
          end('ended');
        },
        complete: () => end('ended'),
      });
      signal.addEventListener('abort', onAbort, { once: true });
      if (moved()) end('changed');
    });
  }

  private async waitUnknown(signal: AbortSignal): Promise<void> {
    // The server reconciles unknown deliveries by itself; events and user actions wake us early.
    await this.wake.wait(delayAt(this.ctx.timing.unknownPollDelaysMs, this.unknownAttempt++), signal);
    if (signal.aborted || this.rec.status !== 'unknown' || this.resubmit) return;
    await this.read(this.rec.operationId!, signal);
  }

  private async acknowledgeOnce(signal: AbortSignal): Promise<void> {
    const r = this.rec;
    const id = r.operationId!;
    // A tab sharing the store may have acknowledged it already.
    const stored = await this.ctx.store.get(this.key);
    if (stored && stored.operationId === id && stored.ack === 'acknowledged') {
      this.update({ ack: 'acknowledged', ackError: null });
      return;
    }
    this.update({ ack: 'inFlight' });
    try {
      const data = await this.ctx.http.execute(AcknowledgeForkOperationDocument, { workspaceId: r.workspaceId, id }, { signal, timeoutMs: this.ctx.timing.ackTimeoutMs });
      this.applyOperation(data.acknowledgeForkOperation, false);
      this.update({ ack: 'acknowledged', ackError: null });
    } catch (err) {
      if (signal.aborted) {
        this.update({ ack: 'pending' });
        return;
      }
      const attempts = this.rec.ackAttempts + 1;
      this.update({ ack: 'pending', ackAttempts: attempts, ackError: asError(err).message });
      if (err instanceof ForkgraphError && (err.code === 'ACKNOWLEDGE_CONFLICT' || err.code === 'NOT_FOUND')) {
        this.halted = true; // no retry can succeed; acknowledge() tries again on request
        return;
      }
      await this.wake.wait(delayAt(this.ctx.timing.ackRetryDelaysMs, attempts - 1), signal);
    }
  }
}
