package forkengine

import (
	"context"
	"encoding/json"
	"time"
)

// PageCursor is a keyset position (Time, ID): forward reads return the rows strictly after it in
// ascending order, backward reads (the ...Before readers) the rows strictly before it, newest
// first. The zero value means "from the start" (forward) or "from the end" (backward).
type PageCursor struct {
	Time time.Time
	ID   string
}

// IsZero reports whether the cursor is the start.
func (c PageCursor) IsZero() bool { return c.Time.IsZero() && c.ID == "" }

// SessionFilter narrows ListSessions. Zero values mean "any".
type SessionFilter struct {
	Kind           SessionKind
	Provider       string
	Visible        *bool
	IncludeDeleted bool
	RootsOnly      bool // sessions without a forkedFrom lineage
	// Search keeps only the sessions whose title and own messages hold every one of these words
	// (ParseSearch makes them from a client's text; search.go says what a word is). Nil: no search.
	Search []string
}

// OperationFilter narrows ListOperations. Zero values mean "any".
type OperationFilter struct {
	SourceSessionID string
	TargetSessionID string
	ThroughTurnID   string
	Statuses        []OperationStatus
}

// Reader is every read the engine and the API need. All reads are scoped by workspace. Single-row
// reads return ErrNotFound (wrapped) when nothing matches; batch reads return maps that simply lack
// the missing keys. Reads include soft-deleted sessions; callers decide what to show.
type Reader interface {
	GetSession(ctx context.Context, workspaceID, id string) (Session, error)
	SessionsByIDs(ctx context.Context, workspaceID string, ids []string) (map[string]Session, error)
	// ListSessions returns up to limit sessions after the cursor, ordered by (CreatedAt, ID).
	ListSessions(ctx context.Context, workspaceID string, f SessionFilter, after PageCursor, limit int) ([]Session, error)
	// ListSessionsBefore returns up to limit sessions strictly before the cursor (zero: from the
	// newest), newest first: descending (CreatedAt, ID). It reads a backward page from its end.
	ListSessionsBefore(ctx context.Context, workspaceID string, f SessionFilter, before PageCursor, limit int) ([]Session, error)
	CountSessions(ctx context.Context, workspaceID string, f SessionFilter) (int, error)
	// SearchSessions reads a search page (f.Search not empty) examining at most scan rows of
	// its rarest word's index (scan <= 0: no bound): up to limit matches strictly after from in
	// (CreatedAt, ID) order, or strictly before it newest first when backward. When the bound
	// stops it first, SearchPage.Reached says where (search.go).
	SearchSessions(ctx context.Context, workspaceID string, f SessionFilter, from PageCursor, limit, scan int, backward bool) (SearchPage, error)
	// CountSearch counts a search's matches: exact and O(1) for one word without a kind or
	// provider filter; otherwise among at most scan rows of its rarest word, a lower bound when
	// rows remain past them (scan <= 0: no bound).
	CountSearch(ctx context.Context, workspaceID string, f SessionFilter, scan int) (SearchCount, error)

	GetTurn(ctx context.Context, workspaceID, id string) (Turn, error)
	TurnsByIDs(ctx context.Context, workspaceID string, ids []string) (map[string]Turn, error)
	// TurnsBySessionIDs returns, per session, up to limit turns with Sequence > afterSequence in
	// sequence order (limit <= 0: all). One statement for all sessions.
	TurnsBySessionIDs(ctx context.Context, workspaceID string, sessionIDs []string, afterSequence int64, limit int) (map[string][]Turn, error)
	// TurnsBySessionIDsBefore returns, per session, up to limit turns with Sequence <
	// beforeSequence (beforeSequence <= 0: no bound), highest sequence first (limit <= 0: all).
	// One statement for all sessions.
	TurnsBySessionIDsBefore(ctx context.Context, workspaceID string, sessionIDs []string, beforeSequence int64, limit int) (map[string][]Turn, error)
	CountTurnsBySessionIDs(ctx context.Context, workspaceID string, sessionIDs []string) (map[string]int, error)
	// LatestTurnsBySessionIDs returns each session's turn with the highest sequence.
	LatestTurnsBySessionIDs(ctx context.Context, workspaceID string, sessionIDs []string) (map[string]Turn, error)
	// ActiveTurnsBySessionIDs returns each session's highest-sequence turn that is not settled.
	ActiveTurnsBySessionIDs(ctx context.Context, workspaceID string, sessionIDs []string) (map[string]Turn, error)
	// TurnsThrough returns a session's turns with Sequence <= maxSequence, in sequence order.
	TurnsThrough(ctx context.Context, workspaceID, sessionID string, maxSequence int64) ([]Turn, error)

	// Every turn and message read returns a committed fork's inherited rows as the child's own:
	// under its session and presented ids (PresentedTurnID, PresentedMessageID), merged with the
	// rows the child stores itself, as its History says. By-id reads accept presented ids.

	// HistoryOf returns the session's History; found is false for a session that has none (a
	// root, or a fork committed before shared history, whose rows are copies).
	HistoryOf(ctx context.Context, workspaceID, sessionID string) (h History, found bool, err error)
	// HistoryClock returns the workspace's history clock: the position of the last message
	// appended to it, which is the watermark a fork frozen now gets.
	HistoryClock(ctx context.Context, workspaceID string) (int64, error)

	// MessagesByTurnIDs returns each turn's messages in Position order.
	MessagesByTurnIDs(ctx context.Context, workspaceID string, turnIDs []string) (map[string][]Message, error)
	MessagesByIDs(ctx context.Context, workspaceID string, ids []string) (map[string]Message, error)

	// InteractionsByTurnIDs returns each turn's interactions in (CreatedAt, ID) order. One
	// statement per batch of turns. A fork's child holds its interactions itself, under the
	// ids it presents its turns with (they are copied at commit, see materialize).
	InteractionsByTurnIDs(ctx context.Context, workspaceID string, turnIDs []string) (map[string][]Interaction, error)
	// InteractionsByIDs returns the interactions that exist among ids, keyed by id.
	InteractionsByIDs(ctx context.Context, workspaceID string, ids []string) (map[string]Interaction, error)
	// AuditMessagesBySessionIDs returns each session's audit messages in (AfterSequence,
	// Position, CreatedAt, ID) order: its own rows and, for a fork's child, those its History's
	// segments present (InheritsAudit, PresentAuditMessage). One statement per batch of sessions.
	AuditMessagesBySessionIDs(ctx context.Context, workspaceID string, sessionIDs []string) (map[string][]AuditMessage, error)
	// AuditMessagesByIDs returns the audit messages that exist among ids, keyed by id; a
	// presented id (PresentedAuditKey) is resolved through its child's History.
	AuditMessagesByIDs(ctx context.Context, workspaceID string, ids []string) (map[string]AuditMessage, error)
	// InteractionByRequest returns the turn's interaction of that request id, or ErrNotFound.
	InteractionByRequest(ctx context.Context, workspaceID, turnID, requestID string) (Interaction, error)

	LineagesByTargetIDs(ctx context.Context, workspaceID string, targetIDs []string) (map[string]Lineage, error)
	// LineagesBySourceIDs returns each source's lineages ordered by (ForkedAt, TargetSessionID).
	LineagesBySourceIDs(ctx context.Context, workspaceID string, sourceIDs []string) (map[string][]Lineage, error)
	// CountFamilyForks counts the forks of the family rooted at rootID that did not fail: the
	// sessions reachable from rootID through lineages (each is one committed fork), plus the
	// prepared, dispatching, provider_accepted and unknown operations whose source is rootID or
	// one of those sessions. One statement, however many forks the family has.
	CountFamilyForks(ctx context.Context, workspaceID, rootID string) (int, error)

	GetOperation(ctx context.Context, workspaceID, id string) (ForkOperation, error)
	OperationsByIDs(ctx context.Context, workspaceID string, ids []string) (map[string]ForkOperation, error)
	GetOperationByRequestID(ctx context.Context, workspaceID, requestID string) (ForkOperation, error)
	// LatestOperationOnBoundary returns the newest (CreatedAt, ID) operation forking source through
	// turn, or ErrNotFound.
	LatestOperationOnBoundary(ctx context.Context, workspaceID, sourceID, turnID string) (ForkOperation, error)
	// LatestOperationStateOnBoundary returns the id and state of the operation
	// LatestOperationOnBoundary would return, or ErrNotFound: what the barrier decides on, read
	// twice by every fork request, without loading the rest of the operation (its snapshot is the
	// whole frozen transcript, and even its row has some thirty columns).
	LatestOperationStateOnBoundary(ctx context.Context, workspaceID, sourceID, turnID string) (OperationState, error)
	// LatestOperationsOnBoundaries returns, for each boundary that has one, its newest
	// (CreatedAt, ID) operation, without its snapshot. One statement per batch of boundaries.
	LatestOperationsOnBoundaries(ctx context.Context, workspaceID string, boundaries []Boundary) (map[Boundary]ForkOperation, error)
	// OperationsBySourceIDs returns every operation whose source is one of ids.
	OperationsBySourceIDs(ctx context.Context, workspaceID string, sourceIDs []string) ([]ForkOperation, error)
	// OperationReservingTarget returns the non-failed operation that reserved target id, or ErrNotFound.
	OperationReservingTarget(ctx context.Context, workspaceID, targetID string) (ForkOperation, error)
	// ListOperations returns up to limit operations after the cursor, ordered by (CreatedAt, ID).
	ListOperations(ctx context.Context, workspaceID string, f OperationFilter, after PageCursor, limit int) ([]ForkOperation, error)
	// ListOperationsBefore returns up to limit operations strictly before the cursor (zero: from
	// the newest), newest first: descending (CreatedAt, ID).
	ListOperationsBefore(ctx context.Context, workspaceID string, f OperationFilter, before PageCursor, limit int) ([]ForkOperation, error)
	CountOperations(ctx context.Context, workspaceID string, f OperationFilter) (int, error)
	// RecoverableOperations pages active operations of every workspace in (CreatedAt, ID) order.
	RecoverableOperations(ctx context.Context, after PageCursor, limit int) ([]ForkOperation, error)

	// EventsAfter returns up to limit events of the workspace with Cursor > after, in cursor order.
	EventsAfter(ctx context.Context, workspaceID string, after int64, limit int) ([]Event, error)
	// OldestEventCursor returns the smallest cursor still kept for the workspace (0 if none), so an
	// expired resume cursor can be told apart from an empty log.
	OldestEventCursor(ctx context.Context, workspaceID string) (int64, error)
	// LatestEventCursor returns the highest cursor of the workspace's events (0 if none), so a
	// client can read a snapshot and then subscribe after this cursor without a gap.
	LatestEventCursor(ctx context.Context, workspaceID string) (int64, error)
	// LogEventsAfter returns up to limit events of every workspace with Cursor > after, in cursor
	// order: what an instance's Feed follows. Cursor order is commit order (see AppendEvents),
	// so a reader that moves past the last cursor it read never skips an event.
	LogEventsAfter(ctx context.Context, after int64, limit int) ([]Event, error)
	// LogHead returns the highest cursor of the whole log (0 if empty): where a Feed starts.
	LogHead(ctx context.Context) (int64, error)

	// ProviderSessionOwner returns the workspace that owns the provider session id of provider
	// (the first to report it, ClaimProviderSession), or ErrNotFound when none does.
	ProviderSessionOwner(ctx context.Context, provider, providerSessionID string) (string, error)
	// ProviderTurnOwner returns a turn of the session, other than exceptTurnID, that is bound to
	// providerTurnID (the reports keep it to one; a database from before may hold several), or
	// ErrNotFound. A turn whose provider turn id only copies its own id (a legacy row, unbound)
	// owns nothing.
	ProviderTurnOwner(ctx context.Context, workspaceID, sessionID, providerTurnID, exceptTurnID string) (Turn, error)

	// GetSubmission returns what was recorded of a turn's submission (the proof binding
	// recovery uses), or ErrNotFound.
	GetSubmission(ctx context.Context, workspaceID, turnID string) (Submission, error)

	// WorkspaceSettingsByIDs returns the stored settings of those of workspaceIDs that have any.
	// One statement for the batch.
	WorkspaceSettingsByIDs(ctx context.Context, workspaceIDs []string) (map[string]WorkspaceSettings, error)

	// PageReader pages the transcript, a turn's messages and a session's forks (ports_pages.go).
	PageReader
}

// Tx is one store transaction: reads see its own writes; nothing is visible to others until the
// function passed to Store.Update returns nil.
type Tx interface {
	Reader

	// UpsertSession inserts the session or replaces every field of the existing row.
	UpsertSession(ctx context.Context, s Session) error
	// UpsertTurn inserts the turn or replaces every field of the existing row of its session; a
	// turn never moves to another session. ErrDuplicate when the id is a turn of another session
	// (nothing is written) or the session already has the sequence; ErrNotFound when the session
	// does not exist.
	UpsertTurn(ctx context.Context, t Turn) error
	// InsertTurns inserts new turns, in one statement where the store can. ErrDuplicate when an id
	// is taken or a session already has (or is given twice) a sequence; ErrNotFound when a turn's
	// session does not exist. On error nothing of the batch is inserted.
	InsertTurns(ctx context.Context, turns []Turn) error
	// BindTurn writes next's ProviderTurnID, ProviderTurnBinding and UpdatedAt over the stored
	// turn if it is settled, of next's session, and still has exactly expect's provider turn id
	// and binding (a compare and swap; a nil binding matches only an absent one). It reports
	// whether it wrote. Only binding recovery calls it, on a turn without a binding.
	BindTurn(ctx context.Context, next, expect Turn) (bool, error)
	// InsertMessages inserts new messages (ErrDuplicate on an existing id) and returns them with
	// Position assigned in slice order. A message appended to an inherited turn (a presented
	// turn id) first gives the child a row of its own for that turn, holding what it presents.
	InsertMessages(ctx context.Context, msgs []Message) ([]Message, error)
	// UpsertInteraction inserts the interaction or replaces the row of its id. ErrDuplicate when
	// another id holds its (turn, request id).
	UpsertInteraction(ctx context.Context, i Interaction) error
	// InsertInteractions inserts new interactions in one statement where the store can.
	// ErrDuplicate when an id or a (turn, request id) is taken; on error nothing is inserted.
	InsertInteractions(ctx context.Context, is []Interaction) error
	// AppendAuditMessages inserts new audit messages (ErrDuplicate on a taken id; then nothing)
	// and returns them as stored: each with the next Position of its workspace's history clock,
	// in slice order, so a fork frozen before holds none of them.
	AppendAuditMessages(ctx context.Context, ms []AuditMessage) ([]AuditMessage, error)
	// SoftDeleteSession stamps DeletedAt; the row and its operations stay.
	SoftDeleteSession(ctx context.Context, workspaceID, id string, at time.Time) error
	// PurgeSession removes the session, its turns, messages, interactions and audit messages, every operation where it is source
	// or target, and every lineage where it is source or target. Rows that a History of another
	// session reads are kept (moved where no session can name them) until the last such history
	// is purged too.
	PurgeSession(ctx context.Context, workspaceID, id string) error

	// InsertOperation inserts a new operation. ErrDuplicate when the request id is taken in the
	// workspace, another active operation holds the same boundary, or a non-failed operation holds
	// the same target id.
	InsertOperation(ctx context.Context, op ForkOperation) error
	// UpdateOperation replaces the stored operation if its stored status is expect and its
	// stored lease owner is op.LeaseOwner (compare and swap). It reports whether a row changed.
	// Snapshot, SnapshotHash and the lease are fixed by InsertOperation (the lease then moves
	// only by ClaimOperations and RenewLeases): the stored ones are kept whatever op carries.
	UpdateOperation(ctx context.Context, op ForkOperation, expect OperationStatus) (bool, error)
	// ReplaceSnapshot stores op.Snapshot as the operation's snapshot, keeping the stored
	// SnapshotHash (the hash of what was frozen). A commit calls it once the transcript is
	// copied into the target, to keep only the snapshot's session. ErrNotFound when the
	// operation does not exist.
	ReplaceSnapshot(ctx context.Context, op ForkOperation) error
	// InsertLineage writes one lineage (one per target; ErrDuplicate otherwise).
	InsertLineage(ctx context.Context, l Lineage) error
	// ClaimProviderSession makes c.WorkspaceID the owner of the provider session c names unless
	// a workspace already is, and returns the owner: c.WorkspaceID when the claim holds. The
	// owner never changes. Of two transactions claiming one provider session for two workspaces
	// at once, one owns it and the other is answered with that owner (a unique key decides).
	ClaimProviderSession(ctx context.Context, c ProviderSessionClaim) (string, error)
	// InsertHistory stores a committed fork's History (ErrDuplicate when the session or its key
	// has one already).
	InsertHistory(ctx context.Context, h History) error

	// InsertSubmission records a turn's submission. ErrDuplicate when the turn has one,
	// ErrNotFound when the turn does not exist. PurgeSession removes it with its turn.
	InsertSubmission(ctx context.Context, s Submission) error
	// UpsertWorkspaceSettings stores a workspace's settings, replacing what it had.
	UpsertWorkspaceSettings(ctx context.Context, s WorkspaceSettings) error
	// ClaimServerKey stores candidate as the server key called name unless one is stored
	// already, and returns the stored one: of two transactions claiming at once, both end up
	// with the key of the one that committed first. A key never changes once stored.
	ClaimServerKey(ctx context.Context, name string, candidate []byte) ([]byte, error)

	// AppendEvents appends to the durable log and returns the events with Cursor assigned. The
	// cursors are handed out under a lock the transaction holds until it ends, so cursor order is
	// commit order: no event becomes visible behind one with a larger cursor. The engine calls it
	// last in a transaction, so the lock is held only for the commit.
	AppendEvents(ctx context.Context, events []Event) ([]Event, error)

	// Lock serialises this transaction against every other that locks one of the same keys,
	// until it ends. It stands in for row locks on rows that may not exist yet (a session being
	// reported, a boundary being forked). Keys are taken in sorted order, so two transactions
	// never deadlock over them. A store whose writers are serialised anyway may do nothing.
	Lock(ctx context.Context, keys ...string) error
}

// Store persists the domain. Update runs fn in one transaction, committing when fn returns nil
// and rolling back otherwise (also on panic). Transactions are isolated by the store's rules and
// by Tx.Lock; fn may be run again when the database asks for a retry (a deadlock or a
// serialisation failure), so it must not have effects outside tx.
type Store interface {
	Reader
	Update(ctx context.Context, fn func(tx Tx) error) error

	// ClaimOperations leases up to c.Limit unfinished (prepared, dispatching, provider_accepted)
	// operations of every workspace to c.Owner until c.Until, in (CreatedAt, ID) order after
	// c.After, and returns them as claimed (without their snapshots). It takes only operations
	// whose lease is free: never leased, or expired at c.Now; with c.TakeOwn also those leased to
	// c.Owner; with c.TakeOthers also those leased to anyone else; with c.TakeAll every one.
	// Concurrent claimers never get the same operation (on PostgreSQL, FOR UPDATE SKIP LOCKED).
	// It also claims unknown operations whose next reconcile attempt is due (LeaseClaim.Claimable).
	ClaimOperations(ctx context.Context, c LeaseClaim) ([]ForkOperation, error)
	// ClaimOperation leases one unfinished or unknown operation to c.Owner until c.Until if its
	// lease is free, already c.Owner's or, with c.TakeOthers, anyone else's (LeaseClaim.Takes), and returns it as it is then (without
	// its snapshot) and whether it was claimed. ErrNotFound when it does not exist.
	ClaimOperation(ctx context.Context, key OperationKey, c LeaseClaim) (ForkOperation, bool, error)
	// RenewLeases extends to until the leases that owner still holds on unfinished or unknown
	// operations among ops and returns the ones it renewed; a lease another instance took over is
	// not renewed.
	RenewLeases(ctx context.Context, owner string, ops []OperationKey, until time.Time) ([]OperationKey, error)
}

// ProviderSessionClaim says that workspace WorkspaceID reported, at At, the provider session
// ProviderSessionID of provider Provider (a driver name): a provider session belongs to the first
// workspace that reports it, so no other can fork it (or copy its conversation into itself).
type ProviderSessionClaim struct {
	Provider          string
	ProviderSessionID string
	WorkspaceID       string
	At                time.Time
}

// Descriptor is what a driver says it can do for one session.
type Descriptor struct {
	Kind             string
	Version          string
	StateBindingMode BindingMode
	ThroughTurn      bool
	FullSession      bool
	// Reconcile says the driver implements Reconciler: an unknown delivery can be resolved by
	// asking the provider, without a second Fork.
	Reconcile bool
	// RecoverBinding says the driver implements BindingRecoverer: a settled turn whose provider
	// binding was lost can be found again in the provider's history by its submission proof.
	RecoverBinding bool
}

// SupportsThroughTurn is the rule for forkThroughTurn: the flag, a kind, a version and a valid mode.
func (d Descriptor) SupportsThroughTurn() bool {
	return d.ThroughTurn && d.Kind != "" && d.Version != "" && d.StateBindingMode.Valid()
}

// SupportsFullSession is the same rule for full-session forks.
func (d Descriptor) SupportsFullSession() bool {
	return d.FullSession && d.Kind != "" && d.Version != "" && d.StateBindingMode.Valid()
}

// Probe asks a driver whether one provider turn of a session can be forked.
type Probe struct {
	Session Session
	Turn    Turn
}

// Disposition is what a driver knows about whether the provider made a child.
type Disposition string

// Delivery dispositions.
const (
	DispositionAccepted    Disposition = "accepted"
	DispositionNotStarted  Disposition = "not_started" // proven never sent
	DispositionRejected    Disposition = "rejected"    // explicit refusal from the provider
	DispositionUnsupported Disposition = "unsupported"
	DispositionUnknown     Disposition = "unknown" // sent, outcome unknown: a child may exist
)

// ForkRequest is what the engine asks a driver to do. WorkspaceID is the tenant the fork is for:
// a driver must fork only a provider session that belongs to it (docs/providers.md, "Tenancy").
type ForkRequest struct {
	WorkspaceID string
	// RequestedBy is the subject who asked for the fork (ForkOperation.RequestedBy; "" in open
	// mode), for a provider that records or checks who forks.
	RequestedBy string
	OperationID string
	RequestID   string
	Source      Session
	ThroughTurn Turn
	// PrefixTurns counts the turns of the frozen prefix (ThroughTurn is the last), BoundTurns
	// those of them with a provider binding: a provider_owned result returns one binding for
	// each. The prefix itself is not sent: the request has the same size for any transcript.
	PrefixTurns     int
	BoundTurns      int
	TargetSessionID string
	TargetTitle     string
	// Target is what the child will be given (ForkOperation.TargetValues): the settings, model,
	// cwd and runtime context frozen at prepare, or the source's when the fork named none.
	Target     ForkTarget
	Descriptor Descriptor
	// Environment and ProviderTargetRef are the request's dispatch-only values: set on the Fork
	// call the start of the fork made, never stored, so a dispatch after a restart or a
	// takeover has none. A driver must not record them either.
	Environment       []EnvironmentVariable
	ProviderTargetRef string
}

// ForkResult is a driver's answer. An error returned beside it means the result is unverifiable
// unless Disposition says otherwise.
type ForkResult struct {
	Disposition       Disposition
	ProviderSessionID string
	StateBindingMode  BindingMode
	TurnBindings      []TurnBinding // provider_owned: one per bound snapshot turn, in order
	Receipt           string        // provider_owned: required; host_copy: must be empty
	Error             string
}

// Driver performs provider work for sessions whose Provider names it.
type Driver interface {
	// Describe says what the driver can do for the session. An error means unsupported.
	Describe(ctx context.Context, s Session) (Descriptor, error)
	// ProbeTurns answers, for every probe in order, whether that provider turn can be forked. One
	// call per batch; an error means "no" for all of them.
	ProbeTurns(ctx context.Context, probes []Probe) ([]bool, error)
	// Fork asks the provider to fork the source through the boundary turn.
	Fork(ctx context.Context, req ForkRequest) (ForkResult, error)
}

// Publisher receives events after the transaction that wrote them commits. It must not block.
type Publisher interface {
	Publish(events []Event)
}

// Clock returns the current time. Tests inject fixed or stepping clocks.
type Clock func() time.Time

// jsonObject returns raw if it holds a JSON object, "{}" if it is empty, and false otherwise.
func jsonObject(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 {
		return json.RawMessage("{}"), true
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, false
	}
	return raw, true
}
