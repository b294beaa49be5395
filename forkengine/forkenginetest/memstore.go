package forkenginetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/forkgraph/forkgraph/forkengine"
)

// rowKey addresses one row: every table is keyed by workspace first, so equal ids in two
// workspaces never collide.
type rowKey struct{ ws, id string }

// memState is one immutable version of the whole store. Committed states are never mutated:
// Update clones the current state, lets fn write to the clone and swaps it in on success.
type memState struct {
	sessions   map[rowKey]forkengine.Session
	turns      map[rowKey]forkengine.Turn
	messages   map[rowKey]forkengine.Message
	operations map[rowKey]forkengine.ForkOperation
	lineages   map[rowKey]forkengine.Lineage // keyed by target session id
	histories  map[rowKey]forkengine.History // keyed by session id
	tombstones int                           // tombstone workspaces made by purges
	events     []forkengine.Event
	positions  map[string]int64 // last message position handed out, per workspace
	lastCursor int64
	// owners holds the workspace that owns each provider session (ClaimProviderSession).
	owners map[providerSessionKey]string
	// submissions holds each turn's recorded submission, keyed by turn id; serverKeys the
	// server keys by name.
	submissions map[rowKey]forkengine.Submission
	serverKeys  map[string][]byte
	// workspaces holds the workspaces' settings (the kill switch).
	workspaces map[string]forkengine.WorkspaceSettings
	// interactions holds the turns' interactions by id.
	interactions map[rowKey]forkengine.Interaction
	// audits holds the sessions' audit messages by id.
	audits map[rowKey]forkengine.AuditMessage
}

func newMemState() *memState {
	return &memState{
		sessions:   map[rowKey]forkengine.Session{},
		turns:      map[rowKey]forkengine.Turn{},
		messages:   map[rowKey]forkengine.Message{},
		operations: map[rowKey]forkengine.ForkOperation{},
		lineages:   map[rowKey]forkengine.Lineage{},
		histories:  map[rowKey]forkengine.History{},
		positions:  map[string]int64{},
		owners:     map[providerSessionKey]string{},

		submissions: map[rowKey]forkengine.Submission{},
		serverKeys:  map[string][]byte{},
		workspaces:  map[string]forkengine.WorkspaceSettings{},

		interactions: map[rowKey]forkengine.Interaction{},
		audits:       map[rowKey]forkengine.AuditMessage{},
	}
}

// clone is shallow on purpose: stored values are deep copies that nobody mutates in place, so
// sharing them between versions is safe and a transaction only pays for the map headers.
func (s *memState) clone() *memState {
	return &memState{
		sessions:   maps.Clone(s.sessions),
		turns:      maps.Clone(s.turns),
		messages:   maps.Clone(s.messages),
		operations: maps.Clone(s.operations),
		lineages:   maps.Clone(s.lineages),
		histories:  maps.Clone(s.histories),
		tombstones: s.tombstones,
		events:     slices.Clip(s.events), // a transaction's append must not write into the committed array
		positions:  maps.Clone(s.positions),
		lastCursor: s.lastCursor,
		owners:     maps.Clone(s.owners),

		submissions: maps.Clone(s.submissions),
		serverKeys:  maps.Clone(s.serverKeys),
		workspaces:  maps.Clone(s.workspaces),

		interactions: maps.Clone(s.interactions),
		audits:       maps.Clone(s.audits),
	}
}

// MemStore is an in-memory forkengine.Store for tests. It enforces the same uniqueness and
// reference rules as the SQL store (it runs the same contract suite), serialises Update calls
// and makes a transaction's writes visible only when it commits. Reads return deep copies.
type MemStore struct {
	memView
	writeMu sync.Mutex   // serialises Update
	stateMu sync.RWMutex // guards the committed pointer
	state   *memState
}

var _ forkengine.Store = (*MemStore)(nil)

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore {
	s := &MemStore{state: newMemState()}
	s.memView = memView{load: s.committed}
	return s
}

func (s *MemStore) committed() *memState {
	s.stateMu.RLock()
	defer s.stateMu.RUnlock()
	return s.state
}

// Update runs fn in a transaction serialised against other Update calls. Its writes become
// visible when fn returns nil; an error or a panic discards them (the panic is re-raised). It
// returns ctx's error if ctx is done before fn runs, or fn's error. fn must not call Update.
func (s *MemStore) Update(ctx context.Context, fn func(tx forkengine.Tx) error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore update: %w", err)
	}
	work := s.committed().clone()
	tx := &memTx{state: work}
	tx.memView = memView{load: tx.current}
	defer tx.close()
	if err := fn(tx); err != nil {
		return err
	}
	s.stateMu.Lock()
	s.state = work
	s.stateMu.Unlock()
	return nil
}

// memTx is the Tx handed to Update's fn. It is unusable once fn returns.
type memTx struct {
	memView
	state  *memState
	closed bool
}

func (tx *memTx) current() *memState {
	if tx.closed {
		panic("forkenginetest: MemStore transaction used after Update returned")
	}
	return tx.state
}

func (tx *memTx) close() { tx.closed = true }
