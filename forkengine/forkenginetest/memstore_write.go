package forkenginetest

import (
	"context"
	"fmt"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

func duplicate(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, forkengine.ErrDuplicate)...)
}

// UpsertSession inserts s or replaces every field of the stored row.
func (tx *memTx) UpsertSession(_ context.Context, s forkengine.Session) error {
	st := tx.current()
	st.sessions[rowKey{s.WorkspaceID, s.ID}] = storedSession(s)
	return nil
}

// UpsertTurn inserts t or replaces the stored row of its session. ErrNotFound when its session
// does not exist (the SQL foreign key), ErrDuplicate when another turn of the session has the same
// sequence or the id is a turn of another session (the SQL upsert's guard).
func (tx *memTx) UpsertTurn(_ context.Context, t forkengine.Turn) error {
	st := tx.current()
	if _, ok := st.sessions[rowKey{t.WorkspaceID, t.SessionID}]; !ok {
		return notFound("session of turn "+t.ID+": session", t.WorkspaceID, t.SessionID)
	}
	if stored, ok := st.turns[rowKey{t.WorkspaceID, t.ID}]; ok && stored.SessionID != t.SessionID {
		return duplicate("turn %s: it is a turn of session %s, not %s", t.ID, stored.SessionID, t.SessionID)
	}
	for k, other := range st.turns {
		if k.ws == t.WorkspaceID && k.id != t.ID && other.SessionID == t.SessionID && other.Sequence == t.Sequence {
			return duplicate("turn %s: session %s already has sequence %d", t.ID, t.SessionID, t.Sequence)
		}
	}
	st.turns[rowKey{t.WorkspaceID, t.ID}] = storedTurn(t)
	return nil
}

// InsertTurns inserts new turns; nothing is inserted on error. ErrNotFound when a session does not
// exist, ErrDuplicate when an id or a (session, sequence) is taken or given twice.
func (tx *memTx) InsertTurns(_ context.Context, turns []forkengine.Turn) error {
	st := tx.current()
	type sequenceKey struct {
		ws, session string
		sequence    int64
	}
	ids, sequences := map[rowKey]bool{}, map[sequenceKey]bool{}
	for k, other := range st.turns {
		ids[k] = true
		sequences[sequenceKey{k.ws, other.SessionID, other.Sequence}] = true
	}
	for _, t := range turns {
		if _, ok := st.sessions[rowKey{t.WorkspaceID, t.SessionID}]; !ok {
			return notFound("session of turn "+t.ID+": session", t.WorkspaceID, t.SessionID)
		}
		k, seq := rowKey{t.WorkspaceID, t.ID}, sequenceKey{t.WorkspaceID, t.SessionID, t.Sequence}
		if ids[k] || sequences[seq] {
			return duplicate("turn %s: its id or sequence %d in session %s is taken", t.ID, t.Sequence, t.SessionID)
		}
		ids[k], sequences[seq] = true, true
	}
	for _, t := range turns {
		st.turns[rowKey{t.WorkspaceID, t.ID}] = storedTurn(t)
	}
	return nil
}

// InsertMessages inserts msgs with increasing positions. ErrDuplicate on an existing id,
// ErrNotFound when a message's turn does not exist. Nothing is inserted on error.
func (tx *memTx) InsertMessages(_ context.Context, msgs []forkengine.Message) ([]forkengine.Message, error) {
	st := tx.current()
	out := make([]forkengine.Message, len(msgs))
	seen := map[rowKey]bool{}
	for i, m := range msgs {
		k := rowKey{m.WorkspaceID, m.ID}
		if _, taken := st.messages[k]; taken || seen[k] {
			return nil, duplicate("message %s in workspace %s", m.ID, m.WorkspaceID)
		}
		if _, ok := st.turns[rowKey{m.WorkspaceID, m.TurnID}]; !ok && !st.adoptInheritedTurn(m.WorkspaceID, m.TurnID) {
			return nil, notFound("turn of message "+m.ID+": turn", m.WorkspaceID, m.TurnID)
		}
		seen[k] = true
		out[i] = m
	}
	for i := range out {
		st.positions[out[i].WorkspaceID]++
		out[i].Position = st.positions[out[i].WorkspaceID]
		out[i].CreatedAt = storedTime(out[i].CreatedAt)
		st.messages[rowKey{out[i].WorkspaceID, out[i].ID}] = out[i]
	}
	return out, nil
}

// SoftDeleteSession stamps DeletedAt. ErrNotFound when the session does not exist.
func (tx *memTx) SoftDeleteSession(_ context.Context, ws, id string, at time.Time) error {
	st := tx.current()
	s, ok := st.sessions[rowKey{ws, id}]
	if !ok {
		return notFound("session", ws, id)
	}
	s.DeletedAt = storedTimePtr(&at)
	st.sessions[rowKey{ws, id}] = s
	return nil
}

// PurgeSession removes the session, its turns and messages, and every operation and lineage
// where it is source or target. Purging a missing session still removes those operations and
// lineages (a failed fork may have reserved a target that never existed).
func (tx *memTx) PurgeSession(_ context.Context, ws, id string) error {
	st := tx.current()
	for k, i := range st.interactions {
		if k.ws == ws && i.SessionID == id {
			delete(st.interactions, k)
		}
	}
	for k, sub := range st.submissions { // before purgeHistory moves turns away
		if k.ws == ws && sub.SessionID == id {
			delete(st.submissions, k)
		}
	}
	st.purgeHistory(ws, id) // moves the audit messages another History reads
	for k, m := range st.audits {
		if k.ws == ws && m.SessionID == id {
			delete(st.audits, k)
		}
	}
	delete(st.sessions, rowKey{ws, id})
	purgedTurns := map[string]bool{}
	for k, t := range st.turns {
		if k.ws == ws && t.SessionID == id {
			purgedTurns[k.id] = true
			delete(st.turns, k)
		}
	}
	for k, m := range st.messages {
		if k.ws == ws && (m.SessionID == id || purgedTurns[m.TurnID]) {
			delete(st.messages, k)
		}
	}
	for k, op := range st.operations {
		if k.ws == ws && (op.SourceSessionID == id || op.TargetSessionID == id) {
			delete(st.operations, k)
		}
	}
	for k, l := range st.lineages {
		if k.ws == ws && (l.SourceSessionID == id || l.TargetSessionID == id) {
			delete(st.lineages, k)
		}
	}
	return nil
}

// checkOperationUnique applies the unique indexes of the operations table to op, ignoring the
// stored row with op's own id (an update may keep its own values).
func checkOperationUnique(st *memState, op forkengine.ForkOperation) error {
	for k, other := range st.operations {
		if k.ws != op.WorkspaceID || k.id == op.ID {
			continue
		}
		switch {
		case other.RequestID == op.RequestID:
			return duplicate("operation %s: request id %s is taken by %s", op.ID, op.RequestID, other.ID)
		case op.Status.Active() && other.Status.Active() &&
			other.SourceSessionID == op.SourceSessionID && other.ThroughTurnID == op.ThroughTurnID:
			return duplicate("operation %s: boundary %s/%s is held by %s", op.ID, op.SourceSessionID, op.ThroughTurnID, other.ID)
		case op.Status != forkengine.StatusFailed && other.Status != forkengine.StatusFailed &&
			other.TargetSessionID == op.TargetSessionID:
			return duplicate("operation %s: target %s is reserved by %s", op.ID, op.TargetSessionID, other.ID)
		}
	}
	return nil
}

// InsertOperation inserts a new operation; ErrDuplicate on its id or any unique rule.
func (tx *memTx) InsertOperation(_ context.Context, op forkengine.ForkOperation) error {
	st := tx.current()
	k := rowKey{op.WorkspaceID, op.ID}
	if _, taken := st.operations[k]; taken {
		return duplicate("operation %s in workspace %s", op.ID, op.WorkspaceID)
	}
	if err := checkOperationUnique(st, op); err != nil {
		return err
	}
	stored, err := storedOperation(op)
	if err != nil {
		return err
	}
	st.operations[k] = stored
	return nil
}

// UpdateOperation replaces the stored operation when its status is expect.
func (tx *memTx) UpdateOperation(_ context.Context, op forkengine.ForkOperation, expect forkengine.OperationStatus) (bool, error) {
	st := tx.current()
	k := rowKey{op.WorkspaceID, op.ID}
	cur, ok := st.operations[k]
	if !ok || cur.Status != expect || cur.LeaseOwner != op.LeaseOwner {
		return false, nil
	}
	if err := checkOperationUnique(st, op); err != nil {
		return false, err
	}
	stored, err := storedOperation(op)
	if err != nil {
		return false, err
	}
	// The snapshot, its hash and the lease are fixed at insert, as in the SQL store.
	stored.Snapshot, stored.SnapshotHash = cur.Snapshot, cur.SnapshotHash
	stored.LeaseOwner, stored.LeaseExpiresAt = cur.LeaseOwner, cur.LeaseExpiresAt
	st.operations[k] = stored
	return true, nil
}

// ReplaceSnapshot replaces the stored snapshot, keeping its hash; ErrNotFound when the
// operation does not exist.
func (tx *memTx) ReplaceSnapshot(_ context.Context, op forkengine.ForkOperation) error {
	st := tx.current()
	k := rowKey{op.WorkspaceID, op.ID}
	cur, ok := st.operations[k]
	if !ok {
		return notFound("fork operation", op.WorkspaceID, op.ID)
	}
	replaced := cur
	replaced.Snapshot = op.Snapshot
	stored, err := storedOperation(replaced) // encoded and decoded, as the SQL store keeps it
	if err != nil {
		return err
	}
	cur.Snapshot = stored.Snapshot
	st.operations[k] = cur
	return nil
}

// InsertLineage writes one lineage; ErrDuplicate when the target or operation already has one.
func (tx *memTx) InsertLineage(_ context.Context, l forkengine.Lineage) error {
	st := tx.current()
	k := rowKey{l.WorkspaceID, l.TargetSessionID}
	if _, taken := st.lineages[k]; taken {
		return duplicate("lineage of target %s in workspace %s", l.TargetSessionID, l.WorkspaceID)
	}
	for lk, other := range st.lineages {
		if lk.ws == l.WorkspaceID && other.OperationID == l.OperationID {
			return duplicate("lineage of operation %s in workspace %s", l.OperationID, l.WorkspaceID)
		}
	}
	l.ForkedAt = storedTime(l.ForkedAt)
	st.lineages[k] = l
	return nil
}

// AppendEvents appends events with increasing cursors.
func (tx *memTx) AppendEvents(_ context.Context, events []forkengine.Event) ([]forkengine.Event, error) {
	st := tx.current()
	out := make([]forkengine.Event, len(events))
	for i, e := range events {
		st.lastCursor++
		e.Cursor = st.lastCursor
		e.OccurredAt = storedTime(e.OccurredAt)
		out[i] = e
		st.events = append(st.events, e)
	}
	return out, nil
}

// Lock does nothing: MemStore serialises every Update already.
func (tx *memTx) Lock(context.Context, ...string) error {
	tx.current()
	return nil
}
