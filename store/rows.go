package store

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The tables of sessions, turns, messages, lineages and events, each described once (table.go):
// every column list, insert, upsert and scan of these tables is derived from these descriptions,
// and a row is read straight into its domain value. Times are microseconds since the epoch.

var sessionsTable = newTable("sessions", []string{"workspace_id", "id"},
	textColumn("workspace_id", func(s *forkengine.Session) *string { return &s.WorkspaceID }),
	textColumn("id", func(s *forkengine.Session) *string { return &s.ID }),
	textColumn("kind", func(s *forkengine.Session) *forkengine.SessionKind { return &s.Kind }),
	textColumn("provider", func(s *forkengine.Session) *string { return &s.Provider }),
	textColumn("provider_session_id", func(s *forkengine.Session) *string { return &s.ProviderSessionID }),
	textColumn("title", func(s *forkengine.Session) *string { return &s.Title }),
	textColumn("rail_section_key", func(s *forkengine.Session) *string { return &s.RailSectionKey }),
	textColumn("cwd", func(s *forkengine.Session) *string { return &s.Cwd }),
	textColumn("model", func(s *forkengine.Session) *string { return &s.Model }),
	objectColumn("settings", func(s *forkengine.Session) *json.RawMessage { return &s.Settings }),
	rawJSONColumn("metadata", func(s *forkengine.Session) *json.RawMessage { return &s.Metadata }),
	textColumn("rail_project_path", func(s *forkengine.Session) *string { return &s.RailProjectPath }),
	rawJSONColumn("runtime_context", func(s *forkengine.Session) *json.RawMessage { return &s.RuntimeContext }),
	booleanColumn("visible", func(s *forkengine.Session) *bool { return &s.Visible }),
	microsColumn("created_at_us", func(s *forkengine.Session) *time.Time { return &s.CreatedAt }),
	microsColumn("updated_at_us", func(s *forkengine.Session) *time.Time { return &s.UpdatedAt }),
	optionalMicrosColumn("deleted_at_us", func(s *forkengine.Session) **time.Time { return &s.DeletedAt }),
)

var turnsTable = newTable("turns", []string{"workspace_id", "id"},
	textColumn("workspace_id", func(t *forkengine.Turn) *string { return &t.WorkspaceID }),
	textColumn("id", func(t *forkengine.Turn) *string { return &t.ID }),
	textColumn("session_id", func(t *forkengine.Turn) *string { return &t.SessionID }),
	integerColumn("sequence", func(t *forkengine.Turn) *int64 { return &t.Sequence }),
	textColumn("phase", func(t *forkengine.Turn) *forkengine.TurnPhase { return &t.Phase }),
	textColumn("outcome", func(t *forkengine.Turn) *forkengine.TurnOutcome { return &t.Outcome }),
	textColumn("origin", func(t *forkengine.Turn) *string { return &t.Origin }),
	microsColumn("started_at_us", func(t *forkengine.Turn) *time.Time { return &t.StartedAt }),
	optionalMicrosColumn("settled_at_us", func(t *forkengine.Turn) **time.Time { return &t.SettledAt }),
	microsColumn("updated_at_us", func(t *forkengine.Turn) *time.Time { return &t.UpdatedAt }),
	textColumn("provider_turn_id", func(t *forkengine.Turn) *string { return &t.ProviderTurnID }),
	rawJSONColumn("provider_turn_binding", func(t *forkengine.Turn) *json.RawMessage { return &t.ProviderTurnBinding }),
	turnErrorColumn, fileChangesColumn, completedCommandColumn,
)

var messagesTable = newTable("messages", []string{"workspace_id", "id"},
	textColumn("workspace_id", func(m *forkengine.Message) *string { return &m.WorkspaceID }),
	textColumn("id", func(m *forkengine.Message) *string { return &m.ID }),
	textColumn("session_id", func(m *forkengine.Message) *string { return &m.SessionID }),
	textColumn("turn_id", func(m *forkengine.Message) *string { return &m.TurnID }),
	integerColumn("position", func(m *forkengine.Message) *int64 { return &m.Position }),
	textColumn("role", func(m *forkengine.Message) *forkengine.MessageRole { return &m.Role }),
	textColumn("content", func(m *forkengine.Message) *string { return &m.Content }),
	microsColumn("created_at_us", func(m *forkengine.Message) *time.Time { return &m.CreatedAt }),
	messagePartsColumn,
)

var lineagesTable = newTable("lineages", []string{"workspace_id", "target_session_id"},
	textColumn("workspace_id", func(l *forkengine.Lineage) *string { return &l.WorkspaceID }),
	textColumn("target_session_id", func(l *forkengine.Lineage) *string { return &l.TargetSessionID }),
	textColumn("operation_id", func(l *forkengine.Lineage) *string { return &l.OperationID }),
	textColumn("source_session_id", func(l *forkengine.Lineage) *string { return &l.SourceSessionID }),
	textColumn("source_turn_id", func(l *forkengine.Lineage) *string { return &l.SourceTurnID }),
	textColumn("target_turn_id", func(l *forkengine.Lineage) *string { return &l.TargetTurnID }),
	microsColumn("forked_at_us", func(l *forkengine.Lineage) *time.Time { return &l.ForkedAt }),
)

// eventLogTable's key is the cursor alone; its workspace comes first like every other table's.
var eventLogTable = newTable("events", []string{"cursor"},
	textColumn("workspace_id", func(e *forkengine.Event) *string { return &e.WorkspaceID }),
	integerColumn("cursor", func(e *forkengine.Event) *int64 { return &e.Cursor }),
	textColumn("kind", func(e *forkengine.Event) *forkengine.EventKind { return &e.Kind }),
	textColumn("session_id", func(e *forkengine.Event) *string { return &e.SessionID }),
	textColumn("turn_id", func(e *forkengine.Event) *string { return &e.TurnID }),
	textColumn("operation_id", func(e *forkengine.Event) *string { return &e.OperationID }),
	textColumn("status", func(e *forkengine.Event) *forkengine.OperationStatus { return &e.Status }),
	microsColumn("occurred_at_us", func(e *forkengine.Event) *time.Time { return &e.OccurredAt }),
)

func micros(t time.Time) int64 { return t.UnixMicro() }

// storedTime is t as a read of its column returns it: UTC, at microsecond precision.
func storedTime(t time.Time) time.Time { return fromMicros(micros(t)) }

func microsPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := t.UnixMicro()
	return &v
}

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func fromMicrosPtr(us *int64) *time.Time {
	if us == nil {
		return nil
	}
	t := fromMicros(*us)
	return &t
}

// marshalVerbatim is json.Marshal without its HTML escaping, for JSON the store keeps: encoding/json
// writes every &, < and > of a string as \u0026, \u003c and \u003e, in json.RawMessage values too,
// so a client's settings or a provider's binding would read back with other bytes than were
// written, and a frozen snapshot would no longer hash as it did when it was frozen.
func marshalVerbatim(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// rawPtr stores an absent RawMessage as NULL.
func rawPtr(raw json.RawMessage) *string {
	if len(raw) == 0 {
		return nil
	}
	s := string(raw)
	return &s
}
