// Errors the client raises. A GraphQL error keeps the server's stable `extensions.code` (and
// `reason`, `retryable`), so callers branch on codes, never on messages (docs/api.md, "Errors").

/** One entry of a GraphQL response's `errors`. */
export interface GraphQLErrorEntry {
  readonly message: string;
  readonly path?: readonly (string | number)[];
  readonly extensions?: Readonly<Record<string, unknown>>;
}

/** Options of a ForkgraphError. */
export interface ForkgraphErrorOptions {
  code: string;
  reason?: string | null;
  retryable?: boolean;
  errors?: readonly GraphQLErrorEntry[];
  status?: number | null;
  cause?: unknown;
}

/**
 * ForkgraphError is a refusal the server stated (its `extensions.code`, e.g. FORK_CONFLICT with
 * reason `turn_not_settled`), or one of the client's own codes: NETWORK_ERROR (TransportError),
 * STREAM_CLOSED, CONNECTION_FORBIDDEN, INVALID_RESPONSE, FORK_NOT_ALLOWED. A refusal changed
 * nothing on the server.
 */
export class ForkgraphError extends Error {
  /** The server's `extensions.code`, or the client's own code. */
  readonly code: string;
  /** The stable sub-code (`extensions.reason`), when there is one. */
  readonly reason: string | null;
  /** Whether the same request may succeed later (`extensions.retryable`). */
  readonly retryable: boolean;
  /** Every error of the response. */
  readonly errors: readonly GraphQLErrorEntry[];
  /** The HTTP status, when the error came from an HTTP response. */
  readonly status: number | null;

  constructor(message: string, options: ForkgraphErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ForkgraphError';
    this.code = options.code;
    this.reason = options.reason ?? null;
    this.retryable = options.retryable ?? false;
    this.errors = options.errors ?? [];
    this.status = options.status ?? null;
  }

  /** fromErrors builds the error of a response's `errors` (the first one names the code). */
  static fromErrors(errors: readonly GraphQLErrorEntry[], status: number | null = null): ForkgraphError {
    const first = errors[0] ?? { message: 'GraphQL error' };
    const ext = first.extensions ?? {};
    const code = typeof ext.code === 'string' ? ext.code : 'GRAPHQL_ERROR';
    const reason = typeof ext.reason === 'string' ? ext.reason : null;
    const retryable = ext.retryable === true;
    const text = [first.message, code, reason].filter(Boolean).join(' · ');
    return new ForkgraphError(text, { code, reason, retryable, errors, status });
  }
}

/**
 * TransportError: the request may or may not have reached the server (the connection failed or
 * was cut, it timed out, or a gateway answered without a GraphQL response). For a fork request
 * that is "delivery unknown": retry with the same identity, never with fresh ids.
 */
export class TransportError extends ForkgraphError {
  constructor(message: string, options: { status?: number | null; cause?: unknown } = {}) {
    super(message, { code: 'NETWORK_ERROR', retryable: true, status: options.status ?? null, cause: options.cause });
    this.name = 'TransportError';
  }
}

/**
 * Codes after which a new token may help: the stream or request is retried with a refreshed one.
 * UNAUTHENTICATED is an HTTP or SSE refusal (reason `token_expired`, `token_revoked`, ...);
 * TOKEN_EXPIRED and TOKEN_REVOKED end a stream whose credential ended (websocket close 4403 with
 * the code as its reason, SSE a last error event); CONNECTION_FORBIDDEN is a websocket whose
 * `connection_init` was refused (close 4403 `Forbidden`).
 */
export const TOKEN_CODES: ReadonlySet<string> = new Set(['UNAUTHENTICATED', 'TOKEN_EXPIRED', 'TOKEN_REVOKED', 'CONNECTION_FORBIDDEN']);

/** isTokenError tells whether err asks for a fresh token (UNAUTHENTICATED, TOKEN_EXPIRED, TOKEN_REVOKED, close 4403). */
export function isTokenError(err: unknown): boolean {
  return err instanceof ForkgraphError && TOKEN_CODES.has(err.code);
}

/**
 * CredentialError: the server refused or ended the token (the refusal's code and reason are
 * kept: UNAUTHENTICATED, TOKEN_EXPIRED, TOKEN_REVOKED, CONNECTION_FORBIDDEN), and the token
 * provider, asked with forceRefresh, had no other token (it returned the same one, or none).
 * Nothing is retried until the application has a new token: a request rejects with it, and a
 * workspace watch waits in status `unauthenticated` until `resume()`.
 */
export class CredentialError extends ForkgraphError {
  /** The refusal the provider could not answer with a new token. */
  readonly refusal: ForkgraphError;

  constructor(refusal: ForkgraphError) {
    super(`${refusal.message} (the token provider has no new token: sign in again, then retry or resume)`, {
      code: refusal.code,
      reason: refusal.reason,
      retryable: false,
      errors: refusal.errors,
      status: refusal.status,
      cause: refusal,
    });
    this.name = 'CredentialError';
    this.refusal = refusal;
  }
}

/** asError turns anything thrown into an Error. */
export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
