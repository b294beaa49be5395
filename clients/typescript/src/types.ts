// The shapes the client hands out, named for users (the generated names follow the documents).
import type {
  ForkTargetInput,
  ForkOperationFieldsFragment,
  LineageFieldsFragment,
  SessionFieldsFragment,
  TurnFieldsFragment,
  WorkspaceEventsSubscription,
} from './generated/graphql.js';

/** A fork operation as the client reads it (ForkOperationFields). */
export type ForkOperation = ForkOperationFieldsFragment;
/** A fork operation with what it made: `session` and `lineage` are non-null only when COMMITTED. */
export type ForkResult = ForkOperationFieldsFragment & {
  session: SessionFieldsFragment | null;
  lineage: LineageFieldsFragment | null;
};
/** A session as the client reads it (SessionFields): capabilities and lineage included. */
export type Session = SessionFieldsFragment;
/** A lineage (SessionFields.forkedFrom). */
export type Lineage = LineageFieldsFragment;
/** A turn with its forkability and the operation pending on it (TurnFields). */
export type Turn = TurnFieldsFragment;
/** One event of workspaceEvents. */
export type WorkspaceEvent = WorkspaceEventsSubscription['workspaceEvents'];

/**
 * isPendingOperation tells whether a new fork request through op's turn would get op back (the
 * server's `Turn.pendingForkOperation`): running, delivery unknown, or committed and not
 * acknowledged.
 */
export function isPendingOperation(op: Pick<ForkOperation, 'status' | 'acknowledgedAt'> | null | undefined): boolean {
  if (!op) return false;
  return op.status === 'ACCEPTED' || op.status === 'UNKNOWN' || (op.status === 'COMMITTED' && !op.acknowledgedAt);
}

/**
 * What a fork gives its new session beyond the source's history (ForkSessionInput.target): a
 * settings overlay (`{ settings: { model: 'gpt-b' } }` forks "with another model"), the prepared
 * cwd and runtime context, and the dispatch-only environment and provider target ref.
 */
export type ForkTarget = ForkTargetInput;
