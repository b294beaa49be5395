// @forkgraph/client/react: hooks over a ForkgraphClient. Put a ForkgraphProvider above them.
import { createContext, createElement, useCallback, useContext, useEffect, useRef, useState, type ReactNode } from 'react';
import type { ForkgraphClient } from '../client.js';
import type { ForkgraphError } from '../errors.js';
import type { ForkHandle, ForkState } from '../fork-handle.js';
import { forkRefusal, type ForkThroughTurnInput } from '../forks.js';
import type { SessionGraph, SessionGraphState } from '../graph.js';
import { boundaryKey, type Boundary } from '../records.js';
import { timeKey } from '../timing.js';
import { isPendingOperation, type ForkOperation, type Turn, type WorkspaceEvent } from '../types.js';
import type { WatchStatus, WorkspaceWatch } from '../watch.js';

interface ContextValue {
  client: ForkgraphClient;
  workspaceId: string | null;
}

const Context = createContext<ContextValue | null>(null);

/** Props of ForkgraphProvider. */
export interface ForkgraphProviderProps {
  client: ForkgraphClient;
  /** The workspace the hooks use when they are not given one. */
  workspaceId?: string;
  /** Resume the stored fork attempts of workspaceId (or all) on mount (default true): what a reload needs. */
  resumeForks?: boolean;
  children?: ReactNode;
}

/** ForkgraphProvider hands client (and a default workspace) to the hooks below it. */
export function ForkgraphProvider({ client, workspaceId, resumeForks = true, children }: ForkgraphProviderProps) {
  useEffect(() => {
    if (!resumeForks) return;
    client.resumeForks(workspaceId === undefined ? {} : { workspaceId }).catch((err: unknown) => {
      console.warn(`forkgraph: resuming forks failed: ${String(err)}`);
    });
  }, [client, workspaceId, resumeForks]);
  return createElement(Context.Provider, { value: { client, workspaceId: workspaceId ?? null } }, children);
}

function useContextValue(): ContextValue {
  const value = useContext(Context);
  if (!value) throw new Error('forkgraph hooks need a <ForkgraphProvider client={...}> above them');
  return value;
}

/** useForkgraphClient returns the provider's client. */
export function useForkgraphClient(): ForkgraphClient {
  return useContextValue().client;
}

function useWorkspace(explicit: string | undefined): string {
  const { workspaceId } = useContextValue();
  const ws = explicit ?? workspaceId;
  if (!ws) throw new Error('forkgraph hooks need a workspaceId (as an option or on the provider)');
  return ws;
}

/** Options of useWorkspaceEvents. */
export interface UseWorkspaceEventsOptions {
  workspaceId?: string;
  /** Resume after this cursor; omitted, snapshot-then-follow (see watchWorkspace). */
  after?: string;
  onEvent?: (event: WorkspaceEvent) => void;
  onSnapshot?: (cursor: string) => void | Promise<void>;
  /** false keeps the stream closed (default true). */
  enabled?: boolean;
}

/** What useWorkspaceEvents returns. */
export interface WorkspaceEventsState {
  status: WatchStatus;
  cursor: string | null;
  lastEvent: WorkspaceEvent | null;
  error: ForkgraphError | null;
  pause(): void;
  resume(): void;
}

/**
 * useWorkspaceEvents follows workspaceEvents while mounted (resuming after the last cursor
 * whenever the stream ends). The callbacks may change between renders without a resubscribe.
 */
export function useWorkspaceEvents(options: UseWorkspaceEventsOptions = {}): WorkspaceEventsState {
  const client = useForkgraphClient();
  const ws = useWorkspace(options.workspaceId);
  const callbacks = useRef(options);
  callbacks.current = options;
  const watch = useRef<WorkspaceWatch | null>(null);
  const [state, setState] = useState<Omit<WorkspaceEventsState, 'pause' | 'resume'>>({ status: 'connecting', cursor: null, lastEvent: null, error: null });
  const enabled = options.enabled ?? true;
  const after = options.after;
  useEffect(() => {
    if (!enabled) return undefined;
    const w = client.watchWorkspace({
      workspaceId: ws,
      ...(after === undefined ? {} : { after }),
      onSnapshot: (cursor) => callbacks.current.onSnapshot?.(cursor),
      onEvent: (event) => {
        setState((s) => ({ ...s, lastEvent: event, cursor: event.cursor, error: null }));
        callbacks.current.onEvent?.(event);
      },
      onStatus: (status) => setState((s) => ({ ...s, status })),
      onError: (error) => setState((s) => ({ ...s, error })),
    });
    watch.current = w;
    return () => {
      w.stop();
      watch.current = null;
    };
  }, [client, ws, after, enabled]);
  const pause = useCallback(() => watch.current?.pause(), []);
  const resume = useCallback(() => watch.current?.resume(), []);
  return { ...state, pause, resume };
}

/** What useSessionGraph returns. */
export interface SessionGraphView extends SessionGraphState {
  /** The graph object (null until mounted). */
  graph: SessionGraph | null;
}

/**
 * useSessionGraph keeps the workspace's sessions (with capabilities, lineage and their latest
 * turn's forkability) live, plus the turns of the sessions named in turnsOf.
 */
export function useSessionGraph(workspaceId?: string, options: { turnsOf?: readonly string[] } = {}): SessionGraphView {
  const client = useForkgraphClient();
  const ws = useWorkspace(workspaceId);
  const [graph, setGraph] = useState<SessionGraph | null>(null);
  const [state, setState] = useState<SessionGraphState>({ workspaceId: ws, loaded: false, sessions: {}, order: [], turns: {}, live: 'connecting', error: null });
  useEffect(() => {
    const g = client.sessionGraph(ws);
    setGraph(g);
    setState(g.getState());
    const off = g.subscribe(() => setState(g.getState()));
    return () => {
      off();
      g.close();
    };
  }, [client, ws]);
  const turnsKey = (options.turnsOf ?? []).join('\u0000');
  useEffect(() => {
    if (!graph || !turnsKey) return;
    for (const id of turnsKey.split('\u0000')) void graph.loadTurns(id);
  }, [graph, turnsKey]);
  return { ...state, graph };
}

/** The turn fields useForkThroughTurn reads (a Turn of the session graph has them). */
export type ForkableTurn = Pick<Turn, 'localId' | 'sessionId' | 'phase' | 'providerForkBindingAvailable' | 'providerForkBindingState'> & {
  pendingForkOperation?: ForkOperation | null;
};

/** What useForkThroughTurn returns. */
export interface UseForkThroughTurn {
  /** This client's attempt on the turn (live, or resumed from the record store), or null. */
  state: ForkState | null;
  handle: ForkHandle | null;
  /**
   * An operation pending on the turn that this client does not drive (another client's, or one
   * from before this store): show it, with acknowledge / reconcile / abandon, instead of a button.
   */
  pending: ForkOperation | null;
  /** A Fork button should be enabled: the turn can be forked and nothing is pending on it. */
  canFork: boolean;
  /** This client's attempt is running (show "Forking…"). */
  forking: boolean;
  /** Why the last action failed (a FORK_NOT_ALLOWED, a refused mutation). */
  error: Error | null;
  fork(): Promise<ForkHandle | null>;
  acknowledge(): Promise<void>;
  reconcile(): Promise<void>;
  abandon(reason: string): Promise<void>;
}

function newer(a: ForkOperation | null, b: ForkOperation | null): ForkOperation | null {
  if (!a) return b;
  if (!b || a.localId !== b.localId) return a;
  return timeKey(b.updatedAt) > timeKey(a.updatedAt) ? b : a;
}

/**
 * useForkThroughTurn drives the fork flow of one turn: fork() starts (or rejoins) the attempt,
 * state follows it live, and an attempt stored before a reload is resumed on mount.
 */
export function useForkThroughTurn(
  turn: ForkableTurn | null,
  options: { workspaceId?: string; session?: ForkThroughTurnInput['session'] } = {},
): UseForkThroughTurn {
  const client = useForkgraphClient();
  const ws = useWorkspace(options.workspaceId);
  const boundary: Boundary | null = turn ? { workspaceId: ws, sourceSessionId: turn.sessionId, turnId: turn.localId } : null;
  const key = boundary ? boundaryKey(boundary) : null;
  const [handle, setHandle] = useState<ForkHandle | null>(() => (boundary ? client.forkFor(boundary) : null));
  const [state, setState] = useState<ForkState | null>(() => handle?.state ?? null);
  const [error, setError] = useState<Error | null>(null);
  const [seen, setSeen] = useState<ForkOperation | null>(null);

  useEffect(() => {
    if (!boundary) {
      setHandle(null);
      return undefined;
    }
    let mounted = true;
    setHandle(client.forkFor(boundary));
    client.resumeFork(boundary).then(
      (h) => mounted && h && setHandle(h),
      (err: unknown) => mounted && setError(err as Error),
    );
    const off = client.onForkChange((h) => {
      if (h.key === key) setHandle(h);
    });
    return () => {
      mounted = false;
      off();
    };
    // boundary is derived from key
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [client, key]);

  useEffect(() => {
    if (!handle) {
      setState(null);
      return undefined;
    }
    setState(handle.state);
    return handle.subscribe(setState);
  }, [handle]);

  const fromTurn = turn?.pendingForkOperation ?? null;
  const current = newer(fromTurn, seen && fromTurn && seen.localId === fromTurn.localId ? seen : null);
  const ours = Boolean(current && state && (state.operationId === current.localId || state.requestId === current.requestId));
  const pending = current && !ours && isPendingOperation(current) ? current : null;
  const mineActive = Boolean(handle && state && state.status !== 'failed' && state.ack !== 'acknowledged');
  const canFork = Boolean(turn) && !pending && !mineActive && forkRefusal(options.session, turn) === null;

  const fork = useCallback(async () => {
    if (!turn) return null;
    setError(null);
    try {
      const h = await client.forkThroughTurn({ workspaceId: ws, sessionId: turn.sessionId, turnId: turn.localId, turn, session: options.session ?? null });
      setHandle(h);
      return h;
    } catch (err) {
      setError(err as Error);
      return null;
    }
  }, [client, ws, turn, options.session]);

  const run = useCallback(async (mine: () => Promise<unknown>, other: (op: ForkOperation) => Promise<ForkOperation>) => {
    setError(null);
    try {
      if (handle && mineActive) await mine();
      else if (pending) setSeen(await other(pending));
    } catch (err) {
      setError(err as Error);
    }
  }, [handle, mineActive, pending]);

  return {
    state,
    handle,
    pending,
    canFork,
    forking: Boolean(state && state.running && (state.status === 'inFlight' || state.status === 'unknown') && state.ack === 'idle'),
    error,
    fork,
    acknowledge: () => run(() => handle!.acknowledge(), (op) => client.acknowledgeOperation(ws, op.localId)),
    reconcile: () => run(() => handle!.reconcile(), (op) => client.reconcileOperation(ws, op.localId)),
    abandon: (reason: string) => run(() => handle!.abandon(reason), (op) => client.abandonOperation(ws, op.localId, reason)),
  };
}
