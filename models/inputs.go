package models

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/forkgraph/forkgraph/forkengine"
)

// reportSessionFields pairs the session report's fields by name (byName); Kind is an enum of
// each side.
var reportSessionFields = byName(reflect.TypeFor[ReportSessionInput](), reflect.TypeFor[forkengine.SessionReport](), "Kind")

// Domain returns the engine's session report. An omitted kind is ROOT.
func (in ReportSessionInput) Domain() forkengine.SessionReport {
	report := forkengine.SessionReport{Kind: forkengine.SessionRoot}
	copyByName(reportSessionFields, &report, in)
	if in.Kind != nil {
		report.Kind = in.Kind.Domain()
	}
	return report
}

// Domain returns the engine's turn report.
func (in ReportTurnInput) Domain() forkengine.TurnReport {
	report := forkengine.TurnReport{
		WorkspaceID: in.WorkspaceID, SessionID: in.SessionID, ID: in.ID, Phase: in.Phase.Domain(),
		Origin: in.Origin, ProviderTurnID: in.ProviderTurnID,
		ProviderTurnBinding: rawOrNil(in.ProviderTurnBinding),
	}
	if in.Outcome != nil {
		report.Outcome = in.Outcome.Domain()
	}
	in.domainTurnDetails(&report)
	if sub := in.Submission; sub != nil {
		report.Submission = &forkengine.SubmissionReport{Content: sub.Content.Domain(), Text: sub.Text}
		if sub.ClientSubmitID != nil {
			report.Submission.ClientSubmitID = *sub.ClientSubmitID
		}
	}
	return report
}

// Domain returns the engine's message append.
func (in AppendMessagesInput) Domain() forkengine.MessageAppend {
	msgs := make([]forkengine.MessageInput, len(in.Messages))
	for i, m := range in.Messages {
		msgs[i] = forkengine.MessageInput{Role: m.Role.Domain(), Parts: domainParts(m.Parts)}
		if m.Content != nil {
			msgs[i].Content = *m.Content
		}
		if m.ID != nil {
			msgs[i].ID = *m.ID
		}
	}
	return forkengine.MessageAppend{
		WorkspaceID: in.WorkspaceID, SessionID: in.SessionID, TurnID: in.TurnID, Messages: msgs,
	}
}

// Domain returns the engine's fork input.
func (in ForkSessionInput) Domain() forkengine.ForkInput {
	fork := forkengine.ForkInput{
		WorkspaceID: in.WorkspaceID, SourceSessionID: in.SourceSessionID,
		ThroughTurnID: in.ThroughTurnID, RequestID: in.RequestID,
	}
	if in.TargetSessionID != nil {
		fork.TargetSessionID = *in.TargetSessionID
	}
	fork.Target = in.Target.Domain()
	return fork
}

// Domain returns the engine's target input (nil when none was given). A JSON null is what
// omitting the value means.
func (in *ForkTargetInput) Domain() *forkengine.TargetInput {
	if in == nil {
		return nil
	}
	out := &forkengine.TargetInput{Cwd: in.Cwd, PreparedContext: jsonOrNil(in.RuntimeContext),
		ProviderTargetRef: deref(in.ProviderTargetRef)}
	if o := in.Settings; o != nil {
		out.Settings = &forkengine.SettingsOverlay{Model: o.Model, ModelPlanID: o.ModelPlanID,
			PermissionModeID: o.PermissionModeID, PlanMode: o.PlanMode, ReasoningEffort: o.ReasoningEffort,
			Speed: o.Speed, ConversationDetailMode: o.ConversationDetailMode,
			BrowserUse: jsonOrNil(o.BrowserUse), ComputerUse: jsonOrNil(o.ComputerUse)}
	}
	for _, v := range in.Environment {
		if v != nil {
			out.Environment = append(out.Environment, forkengine.EnvironmentVariable{Name: v.Name, Value: v.Value})
		}
	}
	return out
}

func jsonOrNil(j JSON) json.RawMessage {
	if len(j) == 0 || string(j) == "null" {
		return nil
	}
	return json.RawMessage(j)
}

// Domain returns the engine's session filter (nil: everything).
func (f *SessionFilter) Domain() forkengine.SessionFilter {
	if f == nil {
		return forkengine.SessionFilter{}
	}
	out := forkengine.SessionFilter{Visible: f.Visible}
	if f.Kind != nil {
		out.Kind = f.Kind.Domain()
	}
	out.Provider = deref(f.Provider)
	out.IncludeDeleted = f.IncludeDeleted != nil && *f.IncludeDeleted
	out.RootsOnly = f.RootsOnly != nil && *f.RootsOnly
	return out
}

// SessionListFilter is the engine's filter of a sessions field: filter (nil: everything) and
// the words of search (nil or blank: no search). Errors: BAD_USER_INPUT with reason
// invalid_search (forkengine.ParseSearch).
func SessionListFilter(f *SessionFilter, search *string) (forkengine.SessionFilter, error) {
	out := f.Domain()
	if search == nil {
		return out, nil
	}
	terms, err := forkengine.ParseSearch(*search)
	out.Search = terms
	return out, err
}

// Domain returns the engine's operation filter (nil: everything).
func (f *ForkOperationFilter) Domain() forkengine.OperationFilter {
	if f == nil {
		return forkengine.OperationFilter{}
	}
	out := forkengine.OperationFilter{
		SourceSessionID: deref(f.SourceSessionID), TargetSessionID: deref(f.TargetSessionID),
		ThroughTurnID: deref(f.ThroughTurnID),
	}
	for _, s := range f.Statuses {
		out.Statuses = append(out.Statuses, s.DomainStatuses()...)
	}
	return out
}

// Workspace names the workspace an input writes to, for authorization.
func (in ReportSessionInput) Workspace() string { return in.WorkspaceID }

// Workspace names the workspace an input writes to, for authorization.
func (in ReportTurnInput) Workspace() string { return in.WorkspaceID }

// Workspace names the workspace an input writes to, for authorization.
func (in AppendMessagesInput) Workspace() string { return in.WorkspaceID }

// Workspace names the workspace an input writes to, for authorization.
func (in ForkSessionInput) Workspace() string { return in.WorkspaceID }

// rawOrNil maps an omitted or explicit null JSON input to nil, which the engine reads as "keep".
func rawOrNil(j JSON) json.RawMessage {
	if len(j) == 0 || bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
		return nil
	}
	return json.RawMessage(j)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
