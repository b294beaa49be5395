package forkengine

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// benchSnapshot is a fork-sized snapshot (20 turns of 5 messages) of the given version.
func benchSnapshot(version int) Snapshot {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := Snapshot{Version: version, Session: Session{WorkspaceID: "bench", ID: "source-0", Kind: SessionRoot,
		Provider: "simulated", ProviderSessionID: "provider-source-0", Title: "Benchmark source",
		RailSectionKey: "rail", Settings: json.RawMessage(`{}`), Metadata: json.RawMessage(`{"team":"a"}`),
		Visible: true, CreatedAt: at, UpdatedAt: at}}
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("source-0/turn-%02d", i)
		s.Turns = append(s.Turns, Turn{WorkspaceID: "bench", SessionID: "source-0", ID: id, Sequence: int64(i),
			Phase: PhaseSettled, Outcome: OutcomeCompleted, Origin: "report", StartedAt: at, SettledAt: &at,
			UpdatedAt: at, ProviderTurnID: "provider-" + id, ProviderTurnBinding: json.RawMessage(`{"checkpoint":"` + id + `"}`)})
		for m := range 5 {
			s.Messages = append(s.Messages, Message{WorkspaceID: "bench", SessionID: "source-0", TurnID: id,
				ID: fmt.Sprintf("m-%03d", i*5+m), Position: int64(i*5 + m), Role: RoleAssistant,
				Content: "a message with a few words of content to copy", CreatedAt: at})
		}
	}
	if version == 2 {
		last := s.Turns[len(s.Turns)-1]
		s.Boundary, s.Turns, s.Messages = &last, nil, nil
		s.Segments = []HistorySegment{{OwnerWorkspaceID: "bench", OwnerSessionID: "source-0", From: 1, To: 100, Watermark: 100}}
		s.PrefixTurns, s.BoundTurns = 19, 19
	}
	return s
}

// BenchmarkSnapshotHash hashes a fork-sized version 1 snapshot (a full copy, its session hashed
// field by field) and a version 2 reference (its session hashed as its JSON).
func BenchmarkSnapshotHash(b *testing.B) {
	for _, v := range []int{1, 2} {
		s := benchSnapshot(v)
		b.Run(fmt.Sprintf("v%d", v), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := snapshotHash(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSessionReport checks a report, applies it to the stored session and compares the
// result with it: the engine's own work of a ReportSession replay, without the store.
func BenchmarkSessionReport(b *testing.B) {
	stored := benchSnapshot(1).Session
	title, rail, cwd, model := stored.Title, stored.RailSectionKey, "/work", "m"
	stored.Cwd, stored.Model = cwd, model
	in := SessionReport{WorkspaceID: stored.WorkspaceID, ID: stored.ID, Provider: stored.Provider,
		ProviderSessionID: &stored.ProviderSessionID, Title: &title, RailSectionKey: &rail, Cwd: &cwd, Model: &model,
		Settings: stored.Settings, Metadata: stored.Metadata}
	b.ReportAllocs()
	for b.Loop() {
		r := in
		if err := cleanSessionReport(&r); err != nil {
			b.Fatal(err)
		}
		next := applySessionReport(stored, true, r, stored.UpdatedAt)
		if !sameSession(stored, next) {
			b.Fatal("a replay changed the session")
		}
	}
}
