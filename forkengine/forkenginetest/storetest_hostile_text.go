package forkenginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// hostileTextTests feed the same hostile strings through the engine into every store: each
// store must accept exactly the values the table accepts, give each one back byte for byte, and
// refuse the others with BAD_USER_INPUT and the table's reason, unchanged. A store that kept a
// NUL (SQLite) where another fails on it (PostgreSQL, SQLSTATE 22021) fails here on one of them.
func hostileTextTests() map[string]storeTest {
	return map[string]storeTest{
		"SessionFieldsAgreeOnEveryStore": testHostileSessionFields,
		"TurnFieldsAgreeOnEveryStore":    testHostileTurnFields,
		"MessageContentAgreesOnEveryStore": func(t *testing.T, s forkengine.Store) {
			e := hostileEngine(t, s)
			seedHostileBase(t, e)
			for i, c := range hostileTexts {
				id := fmt.Sprintf("m-%d", i)
				before := storeState(t, s, wsA)
				_, err := e.AppendMessages(context.Background(), forkengine.MessageAppend{WorkspaceID: wsA, SessionID: "base",
					TurnID: "base-t1", Messages: []forkengine.MessageInput{{ID: id, Role: forkengine.RoleUser, Content: c.value}}})
				requireHostileOutcome(t, s, before, err, c.content(), fmt.Sprintf("content %.40q", c.value), func() {
					got, err := s.MessagesByIDs(context.Background(), wsA, []string{id})
					require.NoError(t, err)
					require.Equal(t, c.value, got[id].Content, "content %.40q read back", c.value)
				})
			}
		},
		"JSONObjectsAgreeOnEveryStore": testHostileJSON,
		"AbandonReasonAgreesOnEveryStore": func(t *testing.T, s forkengine.Store) {
			d := NewScriptedDriver()
			e := hostileEngineWith(t, s, d)
			seedHostileBase(t, e)
			for i, c := range hostileTexts {
				if strings.TrimSpace(c.value) == "" || len(strings.TrimSpace(c.value)) > 1000 {
					continue // the reason's own bounds (invalid_reason), not the text rule
				}
				op := unknownOperation(t, e, d, fmt.Sprintf("abandon-%d", i))
				before := storeState(t, s, wsA)
				got, err := e.AbandonForkOperation(context.Background(), wsA, op.ID, c.value)
				requireHostileOutcome(t, s, before, err, c.free, fmt.Sprintf("reason %.40q", c.value), func() {
					require.Equal(t, strings.TrimSpace(c.value), got.Error, "reason %.40q kept as the error", c.value)
					stored, err := s.GetOperation(context.Background(), wsA, op.ID)
					require.NoError(t, err)
					require.Equal(t, strings.TrimSpace(c.value), stored.Error, "reason %.40q read back", c.value)
				})
			}
		},
		"SessionFilterProviderIsCheckedLikeAReport": func(t *testing.T, s forkengine.Store) {
			e := hostileEngine(t, s)
			seedHostileBase(t, e)
			for _, c := range hostileTexts {
				f := forkengine.SessionFilter{Provider: c.value}
				err := f.Check()
				if c.identifier.accepted() {
					require.NoError(t, err, "provider filter %.40q", c.value)
					_, err = s.ListSessions(context.Background(), wsA, f, forkengine.PageCursor{}, 10)
					require.NoError(t, err, "a filter Check accepts reads on every store: %.40q", c.value)
					continue
				}
				requireRefusal(t, err, c.identifier, fmt.Sprintf("provider filter %.40q", c.value))
			}
		},
	}
}

// outcome is what a field must do with a value: accept it (reason "-") or refuse it with
// BAD_USER_INPUT and this reason ("" for a length refusal, which has none).
type outcome string

const accept outcome = "-"

func (o outcome) accepted() bool { return o == accept }

// hostileText is one value and what a free-text field and an identifier-like field (provider,
// providerSessionId, model, ...) must do with it.
type hostileText struct {
	value      string
	free       outcome
	identifier outcome
}

var (
	invalidText = outcome(forkengine.ReasonInvalidText)
	invalidID   = outcome(forkengine.ReasonInvalidID)
	tooLong     = outcome("")
)

// content is what a message's content must do with the value: the free-text rule, under its own
// bound of 1 MiB instead of MaxTextLength.
func (c hostileText) content() outcome {
	if c.free == tooLong {
		return accept
	}
	return c.free
}

// hostileTexts is the table every store must agree on.
var hostileTexts = []hostileText{
	{"plain text", accept, accept},
	{"a\x00b", invalidText, invalidID},
	{"\x00", invalidText, invalidID},
	{"trailing NUL\x00", invalidText, invalidID},
	{"\xff", invalidText, invalidID},
	{"cut é\xc3", invalidText, invalidID},
	{"\xc0\x80 overlong NUL", invalidText, invalidID},
	{"\xed\xa0\x80 UTF-8 of a surrogate", invalidText, invalidID},
	{"\x1b[31mred\x1b[0m", accept, invalidID},
	{"line\r\nnext\ttab", accept, invalidID},
	{"\x7f delete", accept, invalidID},
	{"\u202eoverride\u202c", accept, accept},
	{"\ufeffbom", accept, accept},
	{"non\ufffe\uffffcharacters", accept, accept},
	{"é ✓ 😀 \u0100", accept, accept},
	{" padded ", accept, invalidID},
	{strings.Repeat("é", forkengine.MaxTextLength/2), accept, accept},
	{strings.Repeat("é", forkengine.MaxTextLength/2) + "x", tooLong, tooLong},
}

func hostileEngine(t *testing.T, s forkengine.Store) *forkengine.Engine {
	return hostileEngineWith(t, s, NewScriptedDriver())
}

// hostileEngineWith is an engine over s whose forks go to d and run only when a test drives them.
func hostileEngineWith(t *testing.T, s forkengine.Store, d forkengine.Driver) *forkengine.Engine {
	t.Helper()
	e, err := forkengine.New(forkengine.Config{Store: s, Drivers: map[string]forkengine.Driver{"scripted": d},
		NoBackground: true, DisableBarrier: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	return e
}

// seedHostileBase reports session "base" (provider session "p-base") with one settled, bound
// turn "base-t1" and one message, so every refusal has a store with rows in it to leave alone.
func seedHostileBase(t *testing.T, e *forkengine.Engine) {
	t.Helper()
	ctx := context.Background()
	_, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: wsA, ID: "base", Provider: "scripted",
		ProviderSessionID: ptr("p-base"), Title: ptr("base")})
	require.NoError(t, err)
	_, err = e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: wsA, SessionID: "base", ID: "base-t1",
		Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: ptr("pt-base-t1"),
		ProviderTurnBinding: json.RawMessage(`{"turn":1}`)})
	require.NoError(t, err)
	_, err = e.AppendMessages(ctx, forkengine.MessageAppend{WorkspaceID: wsA, SessionID: "base", TurnID: "base-t1",
		Messages: []forkengine.MessageInput{{ID: "base-m1", Role: forkengine.RoleUser, Content: "hello"}}})
	require.NoError(t, err)
}

func ptr[T any](v T) *T { return &v }

func testHostileSessionFields(t *testing.T, s forkengine.Store) {
	e := hostileEngine(t, s)
	seedHostileBase(t, e)
	fields := []struct {
		name       string
		identifier bool
		set        func(*forkengine.SessionReport, string)
		get        func(forkengine.Session) string
	}{
		{"title", false, func(r *forkengine.SessionReport, v string) { r.Title = &v }, func(s forkengine.Session) string { return s.Title }},
		{"cwd", false, func(r *forkengine.SessionReport, v string) { r.Cwd = &v }, func(s forkengine.Session) string { return s.Cwd }},
		{"railProjectPath", false, func(r *forkengine.SessionReport, v string) { r.RailProjectPath = &v }, func(s forkengine.Session) string { return s.RailProjectPath }},
		{"model", true, func(r *forkengine.SessionReport, v string) { r.Model = &v }, func(s forkengine.Session) string { return s.Model }},
		{"railSectionKey", true, func(r *forkengine.SessionReport, v string) { r.RailSectionKey = &v }, func(s forkengine.Session) string { return s.RailSectionKey }},
		{"providerSessionId", true, func(r *forkengine.SessionReport, v string) { r.ProviderSessionID = &v }, func(s forkengine.Session) string { return s.ProviderSessionID }},
	}
	for _, f := range fields {
		for i, c := range hostileTexts {
			want := c.free
			if f.identifier {
				want = c.identifier
			}
			// A new session per value and an update of "base": a refusal creates nothing and
			// changes nothing. A provider session id is given to new sessions only: once set,
			// it never changes (provider_session_changed).
			ids := []string{fmt.Sprintf("%s-%d", f.name, i), "base"}
			if f.name == "providerSessionId" {
				ids = ids[:1]
			}
			for _, id := range ids {
				report := forkengine.SessionReport{WorkspaceID: wsA, ID: id, Provider: "scripted"}
				f.set(&report, c.value)
				before := storeState(t, s, wsA)
				_, err := e.ReportSession(context.Background(), report)
				what := fmt.Sprintf("%s %.40q (session %s)", f.name, c.value, id)
				requireHostileOutcome(t, s, before, err, want, what, func() {
					got, err := s.GetSession(context.Background(), wsA, id)
					require.NoError(t, err)
					require.Equal(t, c.value, f.get(got), "%s read back", what)
				})
			}
		}
	}
}

func testHostileTurnFields(t *testing.T, s forkengine.Store) {
	e := hostileEngine(t, s)
	seedHostileBase(t, e)
	for i, c := range hostileTexts {
		// The origin is a closed set now (unknown_turn_origin); the error's message is the turn's
		// free text.
		for _, field := range []string{"errorMessage", "providerTurnId"} {
			id := fmt.Sprintf("%s-%d", field, i)
			report := forkengine.TurnReport{WorkspaceID: wsA, SessionID: "base", ID: id, Phase: forkengine.PhaseRunning}
			want := c.free
			if field == "errorMessage" {
				report.Error = &forkengine.TurnError{Code: "hostile", Message: c.value}
			} else {
				report.ProviderTurnID, want = &c.value, c.identifier
			}
			before := storeState(t, s, wsA)
			_, err := e.ReportTurn(context.Background(), report)
			requireHostileOutcome(t, s, before, err, want, fmt.Sprintf("%s %.40q", field, c.value), func() {
				got, err := s.GetTurn(context.Background(), wsA, id)
				require.NoError(t, err)
				message := ""
				if got.Error != nil {
					message = got.Error.Message
				}
				require.Equal(t, c.value, map[string]string{"errorMessage": message, "providerTurnId": got.ProviderTurnID}[field])
			})
		}
	}
}

// hostileJSON is the table of JSON objects: their text is stored, so it follows the text rule;
// an escape is plain ASCII of that text, \u0000 included, and is kept exactly as sent.
var hostileJSON = []struct {
	raw  string
	want outcome
}{
	{`{"a":"plain"}`, accept},
	{`{"a":"\u0000"}`, accept},
	{`{"\u0000":"key"}`, accept},
	{`{"a":"\ud800 lone surrogate escape"}`, accept},
	{`{"a":"\u001b[31m"}`, accept},
	{"{\"a\":\"\xff\"}", invalidText},
	{"{\"a\":\"\xed\xa0\x80\"}", invalidText},
	{"{\"a\":\"\x00\"}", outcome("")}, // not JSON at all: a raw NUL in a string is not allowed
}

func testHostileJSON(t *testing.T, s forkengine.Store) {
	e := hostileEngine(t, s)
	seedHostileBase(t, e)
	ctx := context.Background()
	for i, c := range hostileJSON {
		id := fmt.Sprintf("json-%d", i)
		before := storeState(t, s, wsA)
		_, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: wsA, ID: id, Provider: "scripted",
			Settings: json.RawMessage(c.raw)})
		requireHostileOutcome(t, s, before, err, c.want, fmt.Sprintf("settings %.40q", c.raw), func() {
			got, err := s.GetSession(ctx, wsA, id)
			require.NoError(t, err)
			require.Equal(t, c.raw, string(got.Settings), "settings %.40q read back byte for byte", c.raw)
		})
		before = storeState(t, s, wsA)
		_, err = e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: wsA, SessionID: "base", ID: id,
			Phase: forkengine.PhaseRunning, ProviderTurnBinding: json.RawMessage(c.raw)})
		requireHostileOutcome(t, s, before, err, c.want, fmt.Sprintf("providerTurnBinding %.40q", c.raw), func() {
			got, err := s.GetTurn(ctx, wsA, id)
			require.NoError(t, err)
			require.Equal(t, c.raw, string(got.ProviderTurnBinding), "binding %.40q read back byte for byte", c.raw)
		})
	}
}

// requireHostileOutcome checks err against want; on acceptance it runs readBack, on refusal it
// checks that the store is still in the state before (storeState, taken before the call).
func requireHostileOutcome(t *testing.T, s forkengine.Store, before string, err error, want outcome, what string, readBack func()) {
	t.Helper()
	if want.accepted() {
		require.NoError(t, err, "%s must be accepted", what)
		readBack()
		return
	}
	requireRefusal(t, err, want, what)
	require.Equal(t, before, storeState(t, s, wsA), "%s was refused, so the store must be unchanged", what)
}

func requireRefusal(t *testing.T, err error, want outcome, what string) {
	t.Helper()
	require.Error(t, err, "%s must be refused", what)
	require.Equal(t, forkengine.CodeInvalid, forkengine.ErrorCode(err), "%s: %v", what, err)
	require.Equal(t, string(want), forkengine.ErrorReason(err), "%s: %v", what, err)
}

// storeState renders everything a write to workspace ws could have changed: its sessions, their
// turns and messages, its operations and the event log's positions.
func storeState(t *testing.T, s forkengine.Store, ws string) string {
	t.Helper()
	ctx := context.Background()
	sessions, err := s.ListSessions(ctx, ws, forkengine.SessionFilter{IncludeDeleted: true}, forkengine.PageCursor{}, 10000)
	require.NoError(t, err)
	sessionIDs := ids(sessions, sessionID)
	turns, err := s.TurnsBySessionIDs(ctx, ws, sessionIDs, 0, 0)
	require.NoError(t, err)
	var turnIDs []string
	for _, ts := range turns {
		turnIDs = append(turnIDs, ids(ts, turnID)...)
	}
	messages, err := s.MessagesByTurnIDs(ctx, ws, turnIDs)
	require.NoError(t, err)
	ops, err := s.ListOperations(ctx, ws, forkengine.OperationFilter{}, forkengine.PageCursor{}, 10000)
	require.NoError(t, err)
	head, err := s.LogHead(ctx)
	require.NoError(t, err)
	state, err := json.Marshal(map[string]any{"sessions": sessions, "turns": turns, "messages": messages,
		"operations": ops, "logHead": head})
	require.NoError(t, err)
	return string(state)
}

// unknownOperation starts a fork of "base" through "base-t1" whose delivery d answers unknown, and
// drives it there.
func unknownOperation(t *testing.T, e *forkengine.Engine, d *ScriptedDriver, requestID string) forkengine.ForkOperation {
	t.Helper()
	ctx := context.Background()
	d.QueueFork(ForkStep{Result: forkengine.ForkResult{Disposition: forkengine.DispositionUnknown}})
	op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: wsA, SourceSessionID: "base", ThroughTurnID: "base-t1",
		RequestID: requestID, TargetSessionID: "target-" + requestID})
	require.NoError(t, err)
	op, err = e.ProcessOperation(ctx, wsA, op.ID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusUnknown, op.Status)
	return op
}
