// Pauses and wake-ups. Every wait of the client is a pause from a schedule that can be aborted,
// or a wait for a state change: nothing polls faster than its schedule says.

/** A schedule of pauses in milliseconds; the last one repeats. */
export type Schedule = readonly number[];

/** delayAt returns the pause for the attempt-th retry (0-based) of schedule, capped at its last entry. */
export function delayAt(schedule: Schedule, attempt: number): number {
  if (schedule.length === 0) return 0;
  return schedule[Math.min(Math.max(attempt, 0), schedule.length - 1)]!;
}

/** sleep resolves after ms, or early (without error) when signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Wake lets a loop wait for "something changed": wait() resolves at the next notify() (or when
 * the signal aborts). A notify with nobody waiting is remembered until the next wait, so a change
 * between two waits is not lost.
 */
export class Wake {
  private waiters: Array<() => void> = [];
  private pending = false;

  /** notify wakes every waiter (or the next one to wait). */
  notify(): void {
    if (this.waiters.length === 0) {
      this.pending = true;
      return;
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** wait resolves at the next notify, after ms when given, or when signal aborts. */
  wait(ms?: number, signal?: AbortSignal): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = () => {
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve();
      };
      if (signal?.aborted) {
        resolve();
        return;
      }
      this.waiters.push(done);
      if (ms !== undefined) timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

/** randomId returns a random UUID (crypto.randomUUID exists only in secure browser contexts). */
export function randomId(): string {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * timeKey turns an RFC 3339 UTC time with up to nine fractional digits into microseconds, so two
 * `updatedAt` values compare exactly (the server trims trailing zeros, and Date.parse keeps
 * milliseconds only). NaN when value is not such a time.
 */
export function timeKey(value: string | null | undefined): number {
  const m = /^(.+?)(?:\.(\d+))?Z$/.exec(String(value ?? ''));
  if (!m) return Number.NaN;
  const ms = Date.parse(`${m[1]}Z`);
  return ms * 1000 + Number((m[2] ?? '').padEnd(6, '0').slice(0, 6));
}
