package store

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Row structs mirror the tables exactly; the domain types never reach gorm. Times are *Us fields
// (microseconds since the epoch) on purpose: gorm would stamp fields named CreatedAt/UpdatedAt.

type sessionRow struct {
	WorkspaceID       string `gorm:"column:workspace_id;primaryKey"`
	ID                string `gorm:"column:id;primaryKey"`
	Kind              string `gorm:"column:kind"`
	Provider          string `gorm:"column:provider"`
	ProviderSessionID string `gorm:"column:provider_session_id"`
	Title             string `gorm:"column:title"`
	RailSectionKey    string `gorm:"column:rail_section_key"`
	Cwd               string `gorm:"column:cwd"`
	Model             string `gorm:"column:model"`
	Settings          string `gorm:"column:settings"`
	Visible           bool   `gorm:"column:visible"`
	CreatedAtUs       int64  `gorm:"column:created_at_us"`
	UpdatedAtUs       int64  `gorm:"column:updated_at_us"`
	DeletedAtUs       *int64 `gorm:"column:deleted_at_us"`
}

func (sessionRow) TableName() string { return "sessions" }

type turnRow struct {
	WorkspaceID         string  `gorm:"column:workspace_id;primaryKey"`
	ID                  string  `gorm:"column:id;primaryKey"`
	SessionID           string  `gorm:"column:session_id"`
	Sequence            int64   `gorm:"column:sequence"`
	Phase               string  `gorm:"column:phase"`
	Outcome             string  `gorm:"column:outcome"`
	Origin              string  `gorm:"column:origin"`
	StartedAtUs         int64   `gorm:"column:started_at_us"`
	SettledAtUs         *int64  `gorm:"column:settled_at_us"`
	UpdatedAtUs         int64   `gorm:"column:updated_at_us"`
	ProviderTurnID      string  `gorm:"column:provider_turn_id"`
	ProviderTurnBinding *string `gorm:"column:provider_turn_binding"`
}

func (turnRow) TableName() string { return "turns" }

type messageRow struct {
	WorkspaceID string `gorm:"column:workspace_id;primaryKey"`
	ID          string `gorm:"column:id;primaryKey"`
	SessionID   string `gorm:"column:session_id"`
	TurnID      string `gorm:"column:turn_id"`
	Position    int64  `gorm:"column:position"`
	Role        string `gorm:"column:role"`
	Content     string `gorm:"column:content"`
	CreatedAtUs int64  `gorm:"column:created_at_us"`
}

func (messageRow) TableName() string { return "messages" }

type lineageRow struct {
	WorkspaceID     string `gorm:"column:workspace_id;primaryKey"`
	TargetSessionID string `gorm:"column:target_session_id;primaryKey"`
	OperationID     string `gorm:"column:operation_id"`
	SourceSessionID string `gorm:"column:source_session_id"`
	SourceTurnID    string `gorm:"column:source_turn_id"`
	TargetTurnID    string `gorm:"column:target_turn_id"`
	ForkedAtUs      int64  `gorm:"column:forked_at_us"`
}

func (lineageRow) TableName() string { return "lineages" }

type eventRow struct {
	Cursor       int64  `gorm:"column:cursor;primaryKey;autoIncrement:false"`
	WorkspaceID  string `gorm:"column:workspace_id"`
	Kind         string `gorm:"column:kind"`
	SessionID    string `gorm:"column:session_id"`
	TurnID       string `gorm:"column:turn_id"`
	OperationID  string `gorm:"column:operation_id"`
	Status       string `gorm:"column:status"`
	OccurredAtUs int64  `gorm:"column:occurred_at_us"`
}

func (eventRow) TableName() string { return "events" }

func micros(t time.Time) int64 { return t.UnixMicro() }

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

func fromRawPtr(s *string) json.RawMessage {
	if s == nil {
		return nil
	}
	return json.RawMessage(*s)
}

func toSessionRow(s forkengine.Session) sessionRow {
	settings := string(s.Settings)
	if settings == "" {
		settings = "{}"
	}
	return sessionRow{
		WorkspaceID: s.WorkspaceID, ID: s.ID, Kind: string(s.Kind), Provider: s.Provider,
		ProviderSessionID: s.ProviderSessionID, Title: s.Title, RailSectionKey: s.RailSectionKey,
		Cwd: s.Cwd, Model: s.Model, Settings: settings, Visible: s.Visible,
		CreatedAtUs: micros(s.CreatedAt), UpdatedAtUs: micros(s.UpdatedAt), DeletedAtUs: microsPtr(s.DeletedAt),
	}
}

func (r sessionRow) domain() forkengine.Session {
	return forkengine.Session{
		WorkspaceID: r.WorkspaceID, ID: r.ID, Kind: forkengine.SessionKind(r.Kind), Provider: r.Provider,
		ProviderSessionID: r.ProviderSessionID, Title: r.Title, RailSectionKey: r.RailSectionKey,
		Cwd: r.Cwd, Model: r.Model, Settings: json.RawMessage(r.Settings), Visible: r.Visible,
		CreatedAt: fromMicros(r.CreatedAtUs), UpdatedAt: fromMicros(r.UpdatedAtUs), DeletedAt: fromMicrosPtr(r.DeletedAtUs),
	}
}

func toTurnRow(t forkengine.Turn) turnRow {
	return turnRow{
		WorkspaceID: t.WorkspaceID, ID: t.ID, SessionID: t.SessionID, Sequence: t.Sequence,
		Phase: string(t.Phase), Outcome: string(t.Outcome), Origin: t.Origin,
		StartedAtUs: micros(t.StartedAt), SettledAtUs: microsPtr(t.SettledAt), UpdatedAtUs: micros(t.UpdatedAt),
		ProviderTurnID: t.ProviderTurnID, ProviderTurnBinding: rawPtr(t.ProviderTurnBinding),
	}
}

func (r turnRow) domain() forkengine.Turn {
	return forkengine.Turn{
		WorkspaceID: r.WorkspaceID, ID: r.ID, SessionID: r.SessionID, Sequence: r.Sequence,
		Phase: forkengine.TurnPhase(r.Phase), Outcome: forkengine.TurnOutcome(r.Outcome), Origin: r.Origin,
		StartedAt: fromMicros(r.StartedAtUs), SettledAt: fromMicrosPtr(r.SettledAtUs), UpdatedAt: fromMicros(r.UpdatedAtUs),
		ProviderTurnID: r.ProviderTurnID, ProviderTurnBinding: fromRawPtr(r.ProviderTurnBinding),
	}
}

func toMessageRow(m forkengine.Message) messageRow {
	return messageRow{
		WorkspaceID: m.WorkspaceID, ID: m.ID, SessionID: m.SessionID, TurnID: m.TurnID, Position: m.Position,
		Role: string(m.Role), Content: m.Content, CreatedAtUs: micros(m.CreatedAt),
	}
}

func (r messageRow) domain() forkengine.Message {
	return forkengine.Message{
		WorkspaceID: r.WorkspaceID, ID: r.ID, SessionID: r.SessionID, TurnID: r.TurnID, Position: r.Position,
		Role: forkengine.MessageRole(r.Role), Content: r.Content, CreatedAt: fromMicros(r.CreatedAtUs),
	}
}

func toLineageRow(l forkengine.Lineage) lineageRow {
	return lineageRow{
		WorkspaceID: l.WorkspaceID, TargetSessionID: l.TargetSessionID, OperationID: l.OperationID,
		SourceSessionID: l.SourceSessionID, SourceTurnID: l.SourceTurnID, TargetTurnID: l.TargetTurnID,
		ForkedAtUs: micros(l.ForkedAt),
	}
}

func (r lineageRow) domain() forkengine.Lineage {
	return forkengine.Lineage{
		WorkspaceID: r.WorkspaceID, TargetSessionID: r.TargetSessionID, OperationID: r.OperationID,
		SourceSessionID: r.SourceSessionID, SourceTurnID: r.SourceTurnID, TargetTurnID: r.TargetTurnID,
		ForkedAt: fromMicros(r.ForkedAtUs),
	}
}

func toEventRow(e forkengine.Event) eventRow {
	return eventRow{
		Cursor: e.Cursor, WorkspaceID: e.WorkspaceID, Kind: string(e.Kind), SessionID: e.SessionID,
		TurnID: e.TurnID, OperationID: e.OperationID, Status: string(e.Status), OccurredAtUs: micros(e.OccurredAt),
	}
}

func (r eventRow) domain() forkengine.Event {
	return forkengine.Event{
		Cursor: r.Cursor, WorkspaceID: r.WorkspaceID, Kind: forkengine.EventKind(r.Kind), SessionID: r.SessionID,
		TurnID: r.TurnID, OperationID: r.OperationID, Status: forkengine.OperationStatus(r.Status),
		OccurredAt: fromMicros(r.OccurredAtUs),
	}
}
