package forkengine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ReasonInvalidTarget marks a BAD_USER_INPUT for a fork's target settings or context whose shape
// breaks the rules (a runtime context that is not a JSON object, an environment variable without
// a valid name or named twice, values too large, target settings that would not be storable).
// Characters of identifier-like values are invalid_id, those of the cwd invalid_text.
const ReasonInvalidTarget = "invalid_target"

// Limits of a fork's dispatch-only environment.
const (
	MaxEnvironmentVariables = 200
	MaxEnvironmentValue     = 32 << 10
)

// SettingsOverlay is what a fork writes over a copy of its source's settings (reference §5.5):
// each of the seven composer values is written when given and kept from the source when nil;
// BrowserUse and ComputerUse are set when given and removed when not, because a tool the new
// composer does not offer must not survive from the source.
type SettingsOverlay struct {
	Model                  *string         `json:"model,omitempty"`
	ModelPlanID            *string         `json:"modelPlanId,omitempty"`
	PermissionModeID       *string         `json:"permissionModeId,omitempty"`
	PlanMode               *bool           `json:"planMode,omitempty"`
	ReasoningEffort        *string         `json:"reasoningEffort,omitempty"`
	Speed                  *string         `json:"speed,omitempty"`
	ConversationDetailMode *string         `json:"conversationDetailMode,omitempty"`
	BrowserUse             json.RawMessage `json:"browserUse,omitempty"` // any JSON value; nil or null: removed
	ComputerUse            json.RawMessage `json:"computerUse,omitempty"`
}

// EnvironmentVariable is one variable of a fork's dispatch-only environment.
type EnvironmentVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// TargetInput is what a fork request says of its target beyond its id: the settings overlay and
// the context the runtime prepared for it. Settings, Cwd and PreparedContext are frozen into the
// operation and reach the child; Environment and ProviderTargetRef are for the dispatch only:
// they are sent to the driver by the call that starts the fork and never stored, so they are no
// part of the request's identity either.
//
// Its JSON encoding is the target's part of the request hash: the dispatch-only fields are not
// encoded.
type TargetInput struct {
	Settings          *SettingsOverlay      `json:"settings,omitempty"`
	Cwd               *string               `json:"cwd,omitempty"`            // the prepared runtime's cwd (trimmed); nil: the source's
	PreparedContext   json.RawMessage       `json:"runtimeContext,omitempty"` // the prepared runtime context, a JSON object, kept whole
	Environment       []EnvironmentVariable `json:"-"`
	ProviderTargetRef string                `json:"-"`
}

// frozen reports whether in holds anything the operation freezes.
func (in *TargetInput) frozen() bool {
	return in != nil && (in.Settings != nil || in.Cwd != nil || in.PreparedContext != nil)
}

// ForkTarget is the target's settings and context as frozen at prepare: what the child gets.
type ForkTarget struct {
	Cwd      string          `json:"cwd"`
	Model    string          `json:"model"`
	Settings json.RawMessage `json:"settings"`
	// PreparedContext becomes the child's RuntimeContext. Its Go name is its own so that the
	// session field is spelled in its five places only (scripts/check-field-places.sh); its JSON
	// name is the wire's and the stored operations', and stays.
	PreparedContext json.RawMessage `json:"runtimeContext,omitempty"`
}

// Clone returns a deep copy of t.
func (t *ForkTarget) Clone() *ForkTarget {
	if t == nil {
		return nil
	}
	c := *t
	c.Settings, c.PreparedContext = cloneJSON(t.Settings), cloneJSON(t.PreparedContext)
	return &c
}

// TargetValues is what op's child is given: the frozen target, or, for a fork asked without
// one (and every operation prepared before targets existed), the source's values as frozen.
func (op ForkOperation) TargetValues() ForkTarget {
	if op.Target != nil {
		return *op.Target.Clone()
	}
	s := op.Snapshot.Session
	return ForkTarget{Cwd: s.Cwd, Model: s.Model, Settings: cloneJSON(s.Settings), PreparedContext: cloneJSON(s.RuntimeContext)}
}

// dispatchOnly is the part of a fork request that reaches the driver once and nothing else.
type dispatchOnly struct {
	environment       []EnvironmentVariable
	providerTargetRef string
}

// cleanTarget checks in and puts it in its canonical form: the cwd trimmed, JSON values compact
// with sorted keys (so the request hash does not depend on spacing or key order), and a target
// that freezes nothing dropped from the identity. Errors: BAD_USER_INPUT with reason invalid_id,
// invalid_text or invalid_target.
func cleanTarget(in *TargetInput) error {
	if in == nil {
		return nil
	}
	if err := cleanOverlay(in.Settings); err != nil {
		return err
	}
	if in.Cwd != nil {
		cwd := strings.TrimSpace(*in.Cwd)
		if len(cwd) > MaxTextLength {
			return ReasonErrorf(CodeInvalid, ReasonInvalidTarget, "target.cwd is longer than %d bytes", MaxTextLength)
		}
		if err := checkText("target.cwd", &cwd); err != nil {
			return err
		}
		in.Cwd = &cwd
	}
	if in.PreparedContext != nil {
		obj, err := canonicalJSON("target.runtimeContext", in.PreparedContext)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(obj, []byte("{")) {
			return ReasonErrorf(CodeInvalid, ReasonInvalidTarget, "target.runtimeContext must be a JSON object")
		}
		in.PreparedContext = obj
	}
	if in.ProviderTargetRef != "" {
		if _, err := cleanID("target.providerTargetRef", in.ProviderTargetRef); err != nil {
			return err
		}
	}
	return checkEnvironment(in.Environment)
}

// cleanOverlay checks the overlay's values: the names follow the id rules (they name a model, a
// plan, a mode), the two tool values are any JSON of bounded size.
func cleanOverlay(o *SettingsOverlay) error {
	if o == nil {
		return nil
	}
	names := []idField{{"settings.model", o.Model}, {"settings.modelPlanId", o.ModelPlanID},
		{"settings.permissionModeId", o.PermissionModeID}, {"settings.reasoningEffort", o.ReasoningEffort},
		{"settings.speed", o.Speed}, {"settings.conversationDetailMode", o.ConversationDetailMode}}
	for _, f := range names {
		if f.value == nil {
			continue
		}
		if _, err := cleanID("target."+f.name, *f.value); err != nil {
			return err
		}
	}
	for _, tool := range []struct {
		name  string
		value *json.RawMessage
	}{{"browserUse", &o.BrowserUse}, {"computerUse", &o.ComputerUse}} {
		if len(*tool.value) == 0 || string(bytes.TrimSpace(*tool.value)) == "null" {
			*tool.value = nil
			continue
		}
		v, err := canonicalJSON("target.settings."+tool.name, *tool.value)
		if err != nil {
			return err
		}
		*tool.value = v
	}
	return nil
}

// checkEnvironment bounds the dispatch-only environment: POSIX names, each once, values that
// survive JSON (valid UTF-8 without NUL, as a process environment needs).
func checkEnvironment(env []EnvironmentVariable) error {
	if len(env) > MaxEnvironmentVariables {
		return ReasonErrorf(CodeInvalid, ReasonInvalidTarget, "target.environment has %d variables; at most %d",
			len(env), MaxEnvironmentVariables)
	}
	seen := make(map[string]bool, len(env))
	for _, v := range env {
		switch {
		case !environmentName(v.Name):
			return ReasonErrorf(CodeInvalid, ReasonInvalidTarget,
				"target.environment: %q is not a variable name (letters, digits and _, not starting with a digit)", v.Name)
		case seen[v.Name]:
			return ReasonErrorf(CodeInvalid, ReasonInvalidTarget, "target.environment names %s twice", v.Name)
		case len(v.Value) > MaxEnvironmentValue || !utf8.ValidString(v.Value) || strings.IndexByte(v.Value, 0) >= 0:
			// The value itself is never quoted: it may be a secret.
			return ReasonErrorf(CodeInvalid, ReasonInvalidTarget,
				"target.environment: the value of %s must be valid UTF-8 without NUL, at most %d bytes", v.Name, MaxEnvironmentValue)
		}
		seen[v.Name] = true
	}
	return nil
}

func environmentName(name string) bool {
	if name == "" || len(name) > MaxIDLength || (name[0] >= '0' && name[0] <= '9') {
		return false
	}
	for _, c := range []byte(name) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// canonicalJSON checks raw is one bounded, valid JSON value and returns it compact with sorted
// keys; numbers keep their digits.
func canonicalJSON(field string, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) > MaxJSONBytes {
		return nil, ReasonErrorf(CodeInvalid, ReasonInvalidTarget, "%s is larger than %d bytes", field, MaxJSONBytes)
	}
	if !utf8.Valid(raw) {
		return nil, ReasonErrorf(CodeInvalid, ReasonInvalidText, "%s must be valid UTF-8", field)
	}
	if !json.Valid(raw) { // one value and nothing after it, which the decoder alone lets through
		return nil, ReasonErrorf(CodeInvalid, ReasonInvalidTarget, "%s must be one JSON value", field)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, ReasonErrorf(CodeInvalid, ReasonInvalidTarget, "%s must be one JSON value", field)
	}
	out, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return nil, ReasonErrorf(CodeInvalid, ReasonInvalidTarget, "%s must be one JSON value", field)
	}
	return out, nil
}

// freezeTarget applies the target rule of reference §5.5 to the source as the prepare
// transaction reads it: the overlay over a copy of the source's settings; the model is the
// settings' model when that is a string, else the source's; the cwd and the runtime context are
// the prepared ones, the runtime context kept whole (worktree isolation facts included), and
// when the request prepared none, the source's (the runtime the child resumes in is the
// source's as it is). A request without a target freezes none (nil): the child copies the
// source as it is. Errors:
// BAD_USER_INPUT reason invalid_target (the settings would grow past MaxJSONBytes, or the model
// they name could not be stored).
func freezeTarget(source Session, in *TargetInput) (*ForkTarget, error) {
	if !in.frozen() {
		return nil, nil
	}
	settings, err := overlaySettings(source.Settings, in.Settings)
	if err != nil {
		return nil, err
	}
	model, err := targetModel(source, settings)
	if err != nil {
		return nil, err
	}
	target := &ForkTarget{Cwd: source.Cwd, Model: model, Settings: settings, PreparedContext: cloneJSON(source.RuntimeContext)}
	if in.Cwd != nil {
		target.Cwd = *in.Cwd
	}
	if in.PreparedContext != nil {
		target.PreparedContext = cloneJSON(in.PreparedContext)
	}
	return target, nil
}

// overlaySettings writes o over a copy of the source's settings object.
func overlaySettings(source json.RawMessage, o *SettingsOverlay) (json.RawMessage, error) {
	if o == nil {
		if len(source) == 0 {
			return json.RawMessage("{}"), nil
		}
		return cloneJSON(source), nil
	}
	fields := map[string]json.RawMessage{}
	if len(source) > 0 {
		if err := json.Unmarshal(source, &fields); err != nil || fields == nil {
			return nil, fmt.Errorf("decode the settings of the source: %w", err)
		}
	}
	for key, value := range map[string]*string{"model": o.Model, "modelPlanId": o.ModelPlanID,
		"permissionModeId": o.PermissionModeID, "reasoningEffort": o.ReasoningEffort, "speed": o.Speed,
		"conversationDetailMode": o.ConversationDetailMode} {
		if value != nil {
			fields[key], _ = json.Marshal(*value)
		}
	}
	if o.PlanMode != nil {
		fields["planMode"], _ = json.Marshal(*o.PlanMode)
	}
	for key, value := range map[string]json.RawMessage{"browserUse": o.BrowserUse, "computerUse": o.ComputerUse} {
		if value == nil {
			delete(fields, key)
		} else {
			fields[key] = value
		}
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("encode target settings: %w", err)
	}
	if len(out) > MaxJSONBytes {
		return nil, ReasonErrorf(CodeInvalid, ReasonInvalidTarget,
			"the target's settings would be larger than %d bytes", MaxJSONBytes)
	}
	return out, nil
}

// targetModel is settings.model when it is a string, else the source's model.
func targetModel(source Session, settings json.RawMessage) (string, error) {
	var fields struct {
		Model json.RawMessage `json:"model"`
	}
	if err := json.Unmarshal(settings, &fields); err != nil {
		return "", fmt.Errorf("decode target settings: %w", err)
	}
	var model string
	if len(fields.Model) == 0 || json.Unmarshal(fields.Model, &model) != nil {
		return source.Model, nil
	}
	// A source's settings are free-form: the string they name may not be one a report could
	// have stored as a model (a NUL would fail the insert on PostgreSQL).
	if err := checkText("model", &model); err != nil {
		return "", ReasonErrorf(CodeInvalid, ReasonInvalidTarget, "the target's settings.model is not a valid model")
	}
	return model, nil
}

// dispatchValues is the dispatch-only part of in, or nil when it has none.
func dispatchValues(in *TargetInput) *dispatchOnly {
	if in == nil || (len(in.Environment) == 0 && in.ProviderTargetRef == "") {
		return nil
	}
	return &dispatchOnly{environment: append([]EnvironmentVariable(nil), in.Environment...),
		providerTargetRef: in.ProviderTargetRef}
}

// dispatchKey carries the dispatch-only values of one operation on the context of the background
// work its start began. A context, not the operation, carries them: the operation is what stores
// keep, and these values must never be kept.
type dispatchKey struct{}

type dispatchValue struct {
	operationID string
	only        *dispatchOnly
}

func withDispatchOnly(ctx context.Context, operationID string, only *dispatchOnly) context.Context {
	if only == nil {
		return ctx
	}
	return context.WithValue(ctx, dispatchKey{}, dispatchValue{operationID, only})
}

// dispatchOnlyFrom returns the dispatch-only values ctx carries for the operation; a dispatch
// from recovery, a takeover or ProcessOperation has none (docs/providers.md says so).
func dispatchOnlyFrom(ctx context.Context, operationID string) *dispatchOnly {
	v, ok := ctx.Value(dispatchKey{}).(dispatchValue)
	if !ok || v.operationID != operationID {
		return nil
	}
	return v.only
}

// childFieldRules applies to a fork's child the rules of the Session fields that are not copied
// as they are (and are not the target's own: its ids, title and dates, targetSession): here, so a
// field-specific rule is written beside the others and the commit names no field for it. target
// is what the operation gives the child (TargetValues).
//
// The runtime context is the prepared one (reference §1.1, §5.5): the frozen target's, which is
// the request's prepared context or else the source's, kept whole (worktree facts included).
func childFieldRules(s *Session, target ForkTarget) {
	s.Metadata = childMetadata(s.Metadata)
	s.RuntimeContext = target.PreparedContext
}

// sourceOnlyMetadata are the keys of a session's metadata that a fork's child does not copy
// (reference §1.1): they describe the source's own import, its usage so far and its goal, none of
// which the new session shares.
var sourceOnlyMetadata = []string{"imported", "usage", "goal"}

// childMetadata is the metadata a fork's child gets: a copy of the source's without
// sourceOnlyMetadata. A source without metadata gives a child without (nil), and one holding
// none of those keys gives its metadata byte for byte. Stored metadata is always an object
// (cleanSessionReport); if it could not be read as one, the child gets none rather than keys it
// must not have.
func childMetadata(source json.RawMessage) json.RawMessage {
	if len(source) == 0 {
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(source, &fields); err != nil || fields == nil {
		return nil
	}
	cleared := false
	for _, key := range sourceOnlyMetadata {
		if _, ok := fields[key]; ok {
			delete(fields, key)
			cleared = true
		}
	}
	if !cleared {
		return cloneJSON(source)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // the values' bytes as the source stored them
	if err := enc.Encode(fields); err != nil {
		return nil
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}
