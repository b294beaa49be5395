// workspaceEvents followed for as long as the caller wants: snapshot-then-follow through
// workspaceEventCursor, and every resume (a dropped connection, RESUME_REQUIRED, a refreshed
// token) subscribes again with `after:` the last cursor received, so the server replays exactly
// what was missed. A cursor the server no longer knows (cursor_expired, invalid_cursor) cannot be
// replayed from: the snapshot step runs again with a fresh cursor. A token the server ended or
// refused that the provider cannot replace (CredentialError) stops the retries until resume():
// the same token could only be refused again.
import { CredentialError, ForkgraphError, asError, isTokenError } from './errors.js';
import { WorkspaceEventCursorDocument, WorkspaceEventsDocument } from './generated/graphql.js';
import type { HttpTransport } from './http.js';
import type { Streams } from './streams.js';
import { Wake, delayAt, type Schedule } from './timing.js';
import type { WorkspaceEvent } from './types.js';

/**
 * Where a watch is. `unauthenticated`: the server ended or refused the token (TOKEN_EXPIRED,
 * TOKEN_REVOKED, UNAUTHENTICATED) and the token provider had no new one; onError got the
 * CredentialError, and resume() tries again (after the user signed in) from the last cursor.
 */
export type WatchStatus = 'connecting' | 'live' | 'reconnecting' | 'paused' | 'unauthenticated' | 'stopped';

/** Options of watchWorkspace. */
export interface WatchWorkspaceOptions {
  workspaceId: string;
  /**
   * Resume after this cursor (the last one you received). Omitted, the watch first reads
   * workspaceEventCursor, calls onSnapshot, then subscribes after that cursor.
   */
  after?: string;
  /**
   * Load your snapshot here: called with the cursor read before it, and awaited before the
   * subscription starts, so every change made meanwhile is replayed. Called again when the
   * server refuses the cursor (expired): the client must reload then.
   */
  onSnapshot?: (cursor: string) => void | Promise<void>;
  /** Each event, in log order, exactly once per resume. */
  onEvent?: (event: WorkspaceEvent) => void;
  onStatus?: (status: WatchStatus) => void;
  /** Each error that ended a stream or a snapshot attempt; the watch goes on after it. */
  onError?: (err: ForkgraphError) => void;
}

/** A running watch. */
export interface WorkspaceWatch {
  /** The cursor the next resume starts after (null before the first read). */
  readonly cursor: string | null;
  readonly status: WatchStatus;
  /** How many times the stream was subscribed again after it ended. */
  readonly resumes: number;
  /** pause ends the stream but keeps the cursor; resume picks up after it (also from `unauthenticated`). */
  pause(): void;
  resume(): void;
  /** stop ends the watch for good. */
  stop(): void;
}

/** What a watch needs from its client. */
export interface WatchContext {
  http: HttpTransport;
  streams: Streams;
  retryDelaysMs: Schedule;
  /** Sees every event before onEvent (the fork flow and session graphs listen here). */
  route(event: WorkspaceEvent): void;
}

const NEEDS_SNAPSHOT = new Set(['cursor_expired', 'invalid_cursor']);

/** startWatch runs a watch; see ForkgraphClient.watchWorkspace. */
export function startWatch(ctx: WatchContext, opts: WatchWorkspaceOptions): WorkspaceWatch {
  let cursor: string | null = opts.after ?? null;
  let needsSnapshot = opts.after === undefined;
  let status: WatchStatus = 'connecting';
  let paused = false;
  let stopped = false;
  let unauthenticated = false;
  let attempt = 0;
  let resumes = 0;
  let ever = false;
  const wake = new Wake();
  let abort = new AbortController();

  const setStatus = (next: WatchStatus) => {
    if (status === next) return;
    status = next;
    opts.onStatus?.(next);
  };
  const fail = (err: unknown) => {
    const e = err instanceof ForkgraphError ? err : new ForkgraphError(asError(err).message, { code: 'CLIENT_ERROR', cause: err });
    opts.onError?.(e);
    return e;
  };

  // One subscription, until it ends: resolves with the error that ended it, or null.
  const follow = (signal: AbortSignal) =>
    new Promise<ForkgraphError | null>((resolve) => {
      let done = false;
      const end = (err: ForkgraphError | null) => {
        if (done) return;
        done = true;
        stop();
        offConnected();
        signal.removeEventListener('abort', onAbort);
        resolve(err);
      };
      const onAbort = () => end(null);
      const offConnected = ctx.streams.onConnected(() => {
        if (!done && !paused && !stopped) setStatus('live');
      });
      const stop = ctx.streams.subscribe(WorkspaceEventsDocument, { workspaceId: opts.workspaceId, after: cursor }, {
        next: (data) => {
          const event = data.workspaceEvents;
          cursor = event.cursor;
          attempt = 0;
          if (!paused && !stopped) setStatus('live');
          ctx.route(event);
          opts.onEvent?.(event);
        },
        error: (err) => end(err),
        complete: () => end(null),
      });
      signal.addEventListener('abort', onAbort, { once: true });
      if (ctx.streams.isOpen() && !paused && !stopped) setStatus('live');
    });

  const snapshot = async () => {
    const data = await ctx.http.execute(WorkspaceEventCursorDocument, { workspaceId: opts.workspaceId }, { signal: abort.signal });
    const read = data.workspaceEventCursor;
    await opts.onSnapshot?.(read);
    cursor = read;
    needsSnapshot = false;
  };

  const run = async () => {
    while (!stopped) {
      if (paused || unauthenticated) {
        await wake.wait();
        continue;
      }
      const signal = abort.signal;
      setStatus(ever ? 'reconnecting' : 'connecting');
      if (needsSnapshot) {
        try {
          await snapshot();
        } catch (err) {
          if (signal.aborted) continue;
          fail(err);
          if (err instanceof CredentialError) block();
          else await wake.wait(delayAt(ctx.retryDelaysMs, attempt++), signal);
          continue;
        }
      }
      if (signal.aborted) continue;
      const err = await follow(signal);
      ever = true;
      if (signal.aborted || stopped || paused) continue;
      resumes++;
      let pause = delayAt(ctx.retryDelaysMs, attempt++);
      if (err instanceof CredentialError) {
        fail(err);
        block();
        continue;
      }
      if (err) {
        fail(err);
        if (err.code === 'BAD_USER_INPUT' && err.reason && NEEDS_SNAPSHOT.has(err.reason)) {
          needsSnapshot = true;
          cursor = null;
        }
        // The server asked for it (it dropped us rather than an event), or the stream ended
        // with its token (TOKEN_EXPIRED, TOKEN_REVOKED, a refusal) and the next one carries a
        // refreshed token: resume at once, the first time.
        if ((err.code === 'RESUME_REQUIRED' || isTokenError(err)) && attempt === 1) pause = 0;
      }
      setStatus('reconnecting');
      await wake.wait(pause, signal);
    }
  };

  // block waits for resume() (or stop()) after a CredentialError.
  const block = () => {
    unauthenticated = true;
    setStatus('unauthenticated');
  };

  opts.onStatus?.(status);
  void run();

  return {
    get cursor() {
      return cursor;
    },
    get status() {
      return status;
    },
    get resumes() {
      return resumes;
    },
    pause() {
      if (paused || stopped) return;
      paused = true;
      unauthenticated = false;
      abort.abort();
      abort = new AbortController();
      setStatus('paused');
    },
    resume() {
      if ((!paused && !unauthenticated) || stopped) return;
      paused = false;
      unauthenticated = false;
      attempt = 0;
      wake.notify();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      abort.abort();
      wake.notify();
      setStatus('stopped');
    },
  };
}
