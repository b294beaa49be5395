// Package forkengine is the domain of forkgraph: sessions of turns, their transcripts, the fork
// lineage between sessions, and the Engine that runs each fork as a durable operation against a
// provider driver. It imports only the standard library; storage (Store), providers (Driver) and
// observers of commits (Publisher) are ports other packages implement.
//
// # The fork lifecycle
//
//	StartFork ─► prepared ───────► dispatching ───────► provider_accepted ───► committed ─ack─► acknowledged
//	   │         reference frozen,│  persisted before  │  child and evidence    target, history,
//	   │         target reserved  │  the Fork call     │  checked               lineage:
//	   │                          │                    │                        one transaction
//	   │                          │                    ├─► failed   not_started, rejected, unsupported
//	   │                          │                    └─► unknown  anything else (timeout, error, invalid
//	   │                          │                          │      result): never dispatched again
//	   │                          │                          ├─reconcile found─► provider_accepted ─► committed
//	   │                          │                          └─reconcile absent, or abandon─► failed
//	   │                          └─► failed   re-check before dispatch broke (driver drift, source changed)
//	   └─► replay or barrier: the existing operation comes back, no new work
//
// Public projection (status, phase): prepared (ACCEPTED, FROZEN), dispatching (ACCEPTED,
// DISPATCHING), provider_accepted (ACCEPTED, MATERIALIZING), committed (COMMITTED, COMMITTED),
// failed (FAILED, FAILED), unknown (UNKNOWN, DELIVERY_UNKNOWN).
//
// # Invariants
//
//   - The transitions table in operation.go is the only place legal status moves live; every
//     status change is a compare-and-swap checked with CanTransition.
//   - A driver's Fork is called at most once per operation: the move to dispatching is committed
//     before the call, and nothing moves an operation out of dispatching or unknown back to
//     prepared. Start-up recovery turns a leftover dispatching operation into unknown.
//   - unknown means "the provider may have made a child". It is never re-dispatched, never
//     acknowledged, and it keeps its target id reserved. Only an answer moves it: reconciliation
//     (asking the provider, which never forks) finds the child or guarantees there is none, or a
//     person abandons it. Attempts back off exponentially on a stored schedule.
//   - A request id names one request: the same body replays the same operation, another body is a
//     FORK_CONFLICT (reason request_conflict). The target id derived for a request without one
//     depends only on (workspace, request id), so replays agree.
//   - What a fork inherits is frozen into the operation's snapshot when it is prepared: a
//     reference to the source's history (the boundary, the segments of rows it reads and the
//     message watermark, history.go), not a copy. Sharing is sound because what a segment reads
//     never changes: messages are insert-only, a settled turn never changes (turn_settled), and a
//     later message takes a position above every watermark frozen before it. Commit writes the
//     child's History, the few turn rows it keeps of its own, and the lineage in one transaction,
//     with ids derived from the operation, so a repeated commit is a no-op and never duplicates.
//     (Version 1 snapshots, from before, hold the prefix and commit as copies.)
//   - When the provider accepts, the acceptance and the commit are written in one transaction.
//     If that transaction fails, the acceptance is written alone and the commit is retried from
//     provider_accepted (by the next ProcessOperation, a read, a replay or recovery), so an
//     accepted child is never forgotten.
//   - A provider's answer is data: its texts are cleaned and bounded (provider_text.go) and
//     evidence no store could keep makes it invalid, before anything is written; an answer whose
//     recording still fails is recorded with a fixed text, never left dispatching, so a refusal
//     can never become unknown and then a commit.
//   - A provider session belongs to one workspace: the first that reports it, or the one a fork
//     made it for (provider_sessions.go). Another workspace cannot report it, fork it, or be
//     handed it as a fork's child.
//   - Every change appends its events to the durable log in the same transaction, last, under a
//     lock held until commit, so cursor order is commit order. Subscribers get events only from a
//     Feed that reads that log in cursor order, never from the goroutines that committed them:
//     live delivery is exactly the replay, on every instance.
//   - The instance driving an unfinished operation holds its lease and renews it while it works;
//     every status change is a compare-and-swap on the lease owner too. No instance moves an
//     operation it does not hold; an expired lease is claimed (TakeOver) and the operation finished
//     by the start-up rules, which are that same takeover (Recover). On a store only one process
//     can open (Config.ExclusiveStore, SQLite) every other owner is dead, so its leases are free.
//   - A provider's answer is recorded as a checkpoint: detached from the caller, on deadlines taken
//     once it has arrived, tried again when a try runs out of time, so an answer obtained is not
//     asked for again.
//   - A bound turn's provider binding never changes through a report, and no two turns of a
//     session are bound to one provider turn. Only binding recovery writes a binding after the
//     fact: asked by a fork through a turn without one (or whose binding the probe refuses), the
//     driver looks the turn up in the provider's history by the proof recorded at submit, and the
//     engine writes what it finds by a compare and swap on the empty binding. Reads never repair;
//     a failed recovery leaves the fork's refusal as it was.
//   - The kill switch (Config.ForkingDisabled, or a workspace's setting in the store) refuses new
//     forks only; everything started goes on, and forkability reads false without a driver call.
//   - A committed operation's session and lineage are rebuilt from the operation and its snapshot,
//     so they answer even after the target session was deleted.
//
// # Streams
//
// The engine owns its streams: a Broker of subscribers and the Feed that fills it from the log
// (Config.Events, StartEvents). A subscription is asked of the engine (FollowOperation,
// WorkspaceStreams.Follow) and is a Stream whose end carries its error. They are the subscription
// rules: a workspace stream replays the
// log after a cursor, then goes live with the seam deduplicated by cursor, and ends with
// RESUME_REQUIRED when its subscriber falls behind; an operation stream sends the current state
// first, then each later status, and completes after a terminal one.
//
// # Several instances
//
//	instance A ──┐                      ┌── Feed A ──► broker A ──► A's subscribers
//	             ├─► one database: rows, leases, event log (NOTIFY on commit)
//	instance B ──┘                      └── Feed B ──► broker B ──► B's subscribers
//
// # The barrier
//
// A client whose fork response was lost may retry with a new request id. With the barrier on (the
// default), a new request on a boundary (source session, through turn) whose latest operation is
// active, unknown, or committed but not yet acknowledged gets that operation back instead of a
// second fork, so the user never ends up with duplicate children. Acknowledge releases a committed
// operation's hold, failure releases it at once, unknown never does. With Config.DisableBarrier
// only an active operation blocks, and the new request fails with a retryable FORK_IN_PROGRESS.
//
// # Lineage
//
// Forks form a forest. Every session has at most one forkedFrom lineage and any number of forks;
// titles number the whole family from its root:
//
//	"123" ──fork──► "123 (2)" ──fork──► "123 (3)"
//	  └─────fork──► "123 (4)"
package forkengine
