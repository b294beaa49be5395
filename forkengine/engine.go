package forkengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Config wires an Engine. Store and Drivers are required; the rest have defaults.
type Config struct {
	Store   Store
	Drivers map[string]Driver // by Session.Provider
	// Publisher observes the events of this engine's commits, after commit and before its feed
	// has them (default: none): metrics, tests. Subscribers get events from the engine's own
	// streams (Events), not from here.
	Publisher Publisher
	// Events configures the engine's own event streams: its Broker and the Feed that fills it
	// from the log (StartEvents starts it).
	Events EventsConfig
	Clock  Clock         // default: time.Now in UTC, truncated to microseconds
	NewID  func() string // default: random UUIDv4
	Logger *slog.Logger  // default: slog.Default()
	// ForkingDisabled is the server's kill switch: every new fork is refused (FORK_UNSUPPORTED,
	// reason forking_disabled) while forks already started, reads, acknowledgements and
	// reconciliation go on. SetWorkspaceForking is the same per workspace.
	ForkingDisabled bool
	// DisableBarrier turns the committed-but-unacknowledged barrier off (SPEC §2.6). With it off,
	// only an active operation on the boundary blocks a new request (FORK_IN_PROGRESS).
	DisableBarrier bool
	// DispatchTimeout bounds one driver Fork call (default 30s); a timeout is delivery unknown.
	DispatchTimeout time.Duration
	// RecoveryPageSize is the page size of start-up recovery (default 100, at most 1000).
	RecoveryPageSize int
	// NoBackground keeps started operations prepared instead of dispatching them in the
	// background; recovery or ProcessOperation drive them. Used by tests and the crash harness.
	NoBackground bool

	// InstanceID names this engine as the owner of the fork leases it takes (default: host,
	// process id and a random suffix). Two live instances must never share one.
	InstanceID string
	// LeaseDuration is how long a lease lasts unless renewed (default DefaultLeaseDuration); the
	// engine renews the leases of the work it is doing every third of it (MaintainLeases). After
	// an instance dies, its unfinished forks wait this long before another instance takes them
	// over.
	LeaseDuration time.Duration
	// ExclusiveStore says no other process can use the store (SQLite): start-up recovery then
	// takes over every unfinished operation whatever its lease, since each lease belongs to a
	// dead process, and for the rest of the engine's life every lease of another owner is free
	// (the reconcile leases of unknown operations a process killed after its start left behind).
	ExclusiveStore bool
	// DetachContext, when set, makes the context of the background work StartFork starts, in
	// place of context.WithoutCancel(ctx): e.g. a new trace linked to the request's. end is
	// called when that work finishes.
	DetachContext func(ctx context.Context) (detached context.Context, end func())

	// checkpointTimeout replaces the default checkpointTimeout (tests, through export_test.go).
	checkpointTimeout time.Duration
	// newTicker replaces time.NewTicker in MaintainLeases (tests: ticks driven by a fake clock).
	newTicker func(period time.Duration) (ticks <-chan time.Time, stop func())
}

// TurnReport is an idempotent upsert of a turn. A new id appends a turn with the next sequence; a
// known id moves it forward. Phases never go backwards; an outcome is given exactly when settled.
type TurnReport struct {
	WorkspaceID    string
	SessionID      string
	ID             string
	Phase          TurnPhase
	Outcome        TurnOutcome
	Origin         *string // a TurnOrigin value (either case)
	ProviderTurnID *string
	// Error, FileChanges and CompletedCommand replace the stored ones when given (nil keeps).
	Error               *TurnError
	FileChanges         *[]FileChange
	CompletedCommand    *CompletedCommand
	ProviderTurnBinding json.RawMessage // nil keeps; must be a JSON object
	// Submission is what the runtime submitted for the turn (nil: not reported now). It is
	// recorded once, as the proof binding recovery looks the provider's history up with.
	Submission *SubmissionReport
}

// MessageInput is one message to append. An empty ID gets a generated one; an existing ID with the
// same role and content (and parts) is skipped (idempotent), with other content it is rejected.
// A message is plain Content or typed Parts, never both: a typed message's content is rendered
// from its parts.
type MessageInput struct {
	ID      string
	Role    MessageRole
	Content string
	Parts   []MessagePart
}

// MessageAppend appends messages to a turn of a session.
type MessageAppend struct {
	WorkspaceID string
	SessionID   string
	TurnID      string
	Messages    []MessageInput
}

// ForkInput starts a fork. TargetSessionID may be empty: the engine picks one deterministically
// from (workspace, request id), so a replay of the same request gets the same target.
type ForkInput struct {
	WorkspaceID     string
	SourceSessionID string
	ThroughTurnID   string
	RequestID       string
	TargetSessionID string
	// RequestedBy names who asks (the caller's subject; "" when unknown, as in open mode). It is
	// recorded on the operation a new request creates and is not part of the request's identity:
	// a replay by anyone gets the operation as its first requester made it.
	RequestedBy string
	// Target is the target's settings overlay and prepared context (reference §5.5); nil: the
	// child copies the source's settings, model and cwd as they are.
	Target *TargetInput
}

// ForkabilityQuery names one turn of one session for a forkability probe.
type ForkabilityQuery struct {
	Session Session
	Turn    Turn
}

// RecoveryReport says what start-up recovery did.
type RecoveryReport struct {
	Scanned   int
	Unknown   int // ended unknown: dispatching at start-up, or a prepared one's provider answer
	Committed int // prepared or provider_accepted → committed
	Failed    int // prepared ones whose re-check or provider refused
	Resumed   int // StartRecovery and TakeOver: prepared and provider_accepted ones handed to background work
	// Reconciled counts reconcile attempts on unknown deliveries that were due (their outcome is
	// counted in Unknown, Committed or Failed like the others'). StartRecovery and TakeOver count
	// the ones they claimed for an attempt, which runs in the background (so also in Resumed).
	Reconciled int
	Errors     []error
}

// Defaults applied by New.
const (
	DefaultDispatchTimeout  = 30 * time.Second
	DefaultRecoveryPageSize = 100
	MaxRecoveryPageSize     = 1000
	// checkpointTimeout bounds one try of a local write that follows a provider call. They run on
	// a context detached from the caller, so a caller that hangs up cannot lose a provider's
	// answer, and a try that runs out of time is made again (checkpoint).
	checkpointTimeout = 10 * time.Second
)

// Engine runs the fork lifecycle over a Store and provider Drivers. It is safe for concurrent use;
// every decision that must not race is re-checked inside one store transaction.
type Engine struct {
	cfg   Config
	store Store
	now   Clock
	newID func() string
	log   *slog.Logger

	leases leaseKeeper // the operations this engine is driving now
	// takeoverSlots holds one token per taken-over operation being driven (takeoverWorkers).
	takeoverSlots chan struct{}

	proofKeys proofKeys // the server key submission digests are made with, once read

	// broker fans events out to subscribers; feed fills it from the log, in cursor order.
	broker *Broker
	feed   *Feed

	// background tracks dispatches started by StartFork; Close waits for them. closed stops new
	// ones from starting once Close has begun (WaitGroup.Add must not race with Wait).
	mu         sync.Mutex
	closed     bool
	background sync.WaitGroup
}

// New builds an engine, filling defaults for every optional Config field. It does not start
// recovery; call Recover once at start-up. It fails when Store is nil or a Config value is out of
// range.
func New(cfg Config) (*Engine, error) {
	if cfg.Store == nil {
		return nil, errors.New("forkengine: Config.Store is required")
	}
	if cfg.Drivers == nil {
		cfg.Drivers = map[string]Driver{}
	}
	if cfg.Clock == nil {
		cfg.Clock = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	if cfg.NewID == nil {
		cfg.NewID = newUUIDv4
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.DispatchTimeout <= 0 {
		cfg.DispatchTimeout = DefaultDispatchTimeout
	}
	if cfg.checkpointTimeout <= 0 {
		cfg.checkpointTimeout = checkpointTimeout
	}
	if cfg.newTicker == nil {
		cfg.newTicker = func(period time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(period)
			return t.C, t.Stop
		}
	}
	if cfg.InstanceID == "" {
		cfg.InstanceID = defaultInstanceID()
	}
	switch {
	case cfg.LeaseDuration == 0:
		cfg.LeaseDuration = DefaultLeaseDuration
	case cfg.LeaseDuration < 30*time.Millisecond:
		return nil, fmt.Errorf("forkengine: LeaseDuration %s is too short to renew", cfg.LeaseDuration)
	}
	switch {
	case cfg.RecoveryPageSize == 0:
		cfg.RecoveryPageSize = DefaultRecoveryPageSize
	case cfg.RecoveryPageSize < 0 || cfg.RecoveryPageSize > MaxRecoveryPageSize:
		return nil, fmt.Errorf("forkengine: RecoveryPageSize %d outside 1..%d", cfg.RecoveryPageSize, MaxRecoveryPageSize)
	}
	broker, feed := newEvents(cfg)
	return &Engine{cfg: cfg, store: cfg.Store, now: cfg.Clock, newID: cfg.NewID, log: cfg.Logger,
		takeoverSlots: make(chan struct{}, takeoverWorkers), broker: broker, feed: feed}, nil
}

// Reader returns the store's read side, for loaders.
func (e *Engine) Reader() Reader { return e.store }

// Close stops new background work from starting and waits for running work to finish. It returns
// ctx's error if ctx ends first; operations left behind stay durable and Recover resumes them.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	done := make(chan struct{})
	go func() {
		e.background.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close engine: %w", ctx.Err())
	}
}

// goBackground runs fn on its own goroutine, tracked for Close, and reports whether it did. Once
// Close has begun it runs nothing: the work is durable (a prepared operation) and whoever takes
// its lease over next finishes it.
func (e *Engine) goBackground(fn func()) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	e.background.Add(1)
	go func() {
		defer e.background.Done()
		fn()
	}()
	return true
}

// changes collects the events of one transaction; update appends them to the durable log inside
// that transaction and publishes them after it commits.
type changes struct {
	at     time.Time
	events []Event
}

func (c *changes) session(kind EventKind, s Session) {
	c.events = append(c.events, Event{WorkspaceID: s.WorkspaceID, Kind: kind, SessionID: s.ID, OccurredAt: c.at})
}

func (c *changes) turn(t Turn) {
	c.events = append(c.events, Event{WorkspaceID: t.WorkspaceID, Kind: EventTurnUpserted,
		SessionID: t.SessionID, TurnID: t.ID, OccurredAt: c.at})
}

// operation logs a fork operation change. SessionID names the source, so a session's subscribers
// can see forks of it start and finish.
func (c *changes) operation(op ForkOperation) {
	c.events = append(c.events, Event{WorkspaceID: op.WorkspaceID, Kind: EventForkOperationUpdated,
		SessionID: op.SourceSessionID, OperationID: op.ID, Status: op.Status, OccurredAt: c.at})
}

// update runs fn in one store transaction with a fresh change set stamped with the engine clock,
// appends the collected events to the log in that transaction, and publishes them after commit.
func (e *Engine) update(ctx context.Context, fn func(tx Tx, c *changes) error) error {
	var committed []Event
	err := e.store.Update(ctx, func(tx Tx) error {
		committed = nil
		c := &changes{at: e.now()}
		if err := fn(tx, c); err != nil {
			return err
		}
		if len(c.events) == 0 {
			return nil
		}
		events, err := tx.AppendEvents(ctx, c.events)
		if err != nil {
			return fmt.Errorf("append events: %w", err)
		}
		committed = events
		return nil
	})
	if err != nil {
		return err
	}
	if len(committed) > 0 {
		if e.cfg.Publisher != nil {
			e.cfg.Publisher.Publish(committed)
		}
		e.feed.Publish(committed)
	}
	return nil
}
