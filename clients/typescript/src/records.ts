// The durable memory of the fork flow: one record per boundary (workspace, source session, turn),
// holding the identity of the latest attempt there and how far it got. Kept in a pluggable store
// so that a page reload in the middle of a fork resumes that fork with the same identity instead
// of starting another (a new identity would hit the server's barrier at best, and fork twice with
// the barrier off).
import type { ForkOperationPhase, ForkTargetInput } from './generated/graphql.js';

/** Where the client's fork attempt is: the upstream engine's four states. */
export type ForkStatus = 'inFlight' | 'succeeded' | 'failed' | 'unknown';

/**
 * The acknowledgement sub-state: idle (nothing to acknowledge yet), pending (committed; the
 * acknowledgement is due or waits for a retry), inFlight (being sent), acknowledged (done: the
 * boundary's barrier is released).
 */
export type AckStatus = 'idle' | 'inFlight' | 'pending' | 'acknowledged';

/** Why an attempt failed or is unknown, with a stable code. */
export interface ForkErrorInfo {
  /**
   * FORK_FAILED (the operation FAILED; `reason` is its errorReason), DELIVERY_UNKNOWN (the
   * provider's answer was lost), REQUEST_UNKNOWN (the request or its answer was cut: retried with
   * the same identity), or the server's refusal code (FORK_CONFLICT, FORK_UNSUPPORTED, ...).
   */
  code: string;
  message: string;
  reason: string | null;
}

/** ForkRecord is what the store keeps per boundary. Plain JSON. */
export interface ForkRecord {
  version: 1;
  workspaceId: string;
  sourceSessionId: string;
  turnId: string;
  requestId: string;
  targetSessionId: string;
  operationId: string | null;
  status: ForkStatus;
  phase: ForkOperationPhase | null;
  ack: AckStatus;
  ackAttempts: number;
  ackError: string | null;
  error: ForkErrorInfo | null;
  /** The server answered with an operation of another request (its barrier) and we follow that. */
  adopted: boolean;
  /**
   * The target the request was sent with, resent with it (another target under the same request
   * id is request_conflict). Never its environment or provider target ref: those are for the
   * fork call only and are not kept, here or on the server.
   */
  target?: ForkTargetInput | null;
  createdAt: number;
  updatedAt: number;
}

/** A boundary: the turn a fork goes through. */
export interface Boundary {
  workspaceId: string;
  sourceSessionId: string;
  turnId: string;
}

/**
 * ForkRecordStore keeps records by key (see boundaryKey). Methods may be synchronous or return
 * promises; a store shared by several tabs (localStorage) lets a second tab reuse the first's
 * identity.
 */
export interface ForkRecordStore {
  get(key: string): ForkRecord | null | Promise<ForkRecord | null>;
  set(key: string, record: ForkRecord): void | Promise<void>;
  delete(key: string): void | Promise<void>;
  list(): ForkRecord[] | Promise<ForkRecord[]>;
}

/** boundaryKey is the store key of a boundary. */
export function boundaryKey(b: Boundary): string {
  return [b.workspaceId, b.sourceSessionId, b.turnId].map(encodeURIComponent).join(':');
}

/**
 * isResumable tells whether a record's identity must be reused by the next attempt on its
 * boundary: it is in flight, unknown, or committed with the acknowledgement not done. Only a
 * confirmed failure or a finished acknowledgement lets the next attempt mint fresh ids.
 */
export function isResumable(r: ForkRecord): boolean {
  if (r.status === 'failed') return false;
  return r.ack !== 'acknowledged';
}

/** MemoryForkRecordStore keeps records in memory (for Node, tests, or pages that need no reload). */
export class MemoryForkRecordStore implements ForkRecordStore {
  private readonly records = new Map<string, ForkRecord>();

  get(key: string): ForkRecord | null {
    const r = this.records.get(key);
    return r ? structuredClone(r) : null;
  }

  set(key: string, record: ForkRecord): void {
    this.records.set(key, structuredClone(record));
  }

  delete(key: string): void {
    this.records.delete(key);
  }

  list(): ForkRecord[] {
    return [...this.records.values()].map((r) => structuredClone(r));
  }
}

/** The part of the Web Storage API the storage store uses (window.localStorage has it). */
export interface StorageLike {
  readonly length: number;
  key(index: number): string | null;
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

function isRecord(value: unknown): value is ForkRecord {
  const r = value as ForkRecord | null;
  return Boolean(r) && r!.version === 1 && typeof r!.requestId === 'string' && typeof r!.targetSessionId === 'string' &&
    typeof r!.workspaceId === 'string' && typeof r!.sourceSessionId === 'string' && typeof r!.turnId === 'string';
}

/**
 * WebStorageForkRecordStore keeps records in a Web Storage (localStorage by default), under
 * `<prefix><key>`, so they survive a reload and are shared by the tabs of one origin. A value
 * that is not a record (another version, hand-edited) is ignored.
 */
export class WebStorageForkRecordStore implements ForkRecordStore {
  private readonly storage: StorageLike;
  private readonly prefix: string;

  constructor(storage?: StorageLike, prefix = 'forkgraph.fork:') {
    const fallback = (globalThis as { localStorage?: StorageLike }).localStorage;
    const chosen = storage ?? fallback;
    if (!chosen) throw new Error('WebStorageForkRecordStore: no storage given and no localStorage here');
    this.storage = chosen;
    this.prefix = prefix;
  }

  get(key: string): ForkRecord | null {
    return this.read(this.prefix + key);
  }

  set(key: string, record: ForkRecord): void {
    this.storage.setItem(this.prefix + key, JSON.stringify(record));
  }

  delete(key: string): void {
    this.storage.removeItem(this.prefix + key);
  }

  list(): ForkRecord[] {
    const out: ForkRecord[] = [];
    for (let i = 0; i < this.storage.length; i++) {
      const k = this.storage.key(i);
      if (k === null || !k.startsWith(this.prefix)) continue;
      const r = this.read(k);
      if (r) out.push(r);
    }
    return out;
  }

  private read(fullKey: string): ForkRecord | null {
    const raw = this.storage.getItem(fullKey);
    if (raw === null) return null;
    try {
      const value: unknown = JSON.parse(raw);
      return isRecord(value) ? value : null;
    } catch {
      return null;
    }
  }
}
