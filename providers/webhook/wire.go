package webhook

import (
	"encoding/json"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The wire types are the protocol's JSON shapes. They are kept apart from the domain types so that
// renaming a Go field never changes the protocol.

type wireSession struct {
	WorkspaceID       string          `json:"workspaceId"`
	ID                string          `json:"id"`
	Kind              string          `json:"kind"`
	Provider          string          `json:"provider"`
	ProviderSessionID string          `json:"providerSessionId"`
	Title             string          `json:"title"`
	Cwd               string          `json:"cwd"`
	Model             string          `json:"model"`
	Settings          json.RawMessage `json:"settings"`
}

type wireTurn struct {
	ID                  string          `json:"id"`
	SessionID           string          `json:"sessionId"`
	Sequence            int64           `json:"sequence"`
	Phase               string          `json:"phase"`
	Outcome             string          `json:"outcome,omitempty"`
	SettledAt           *time.Time      `json:"settledAt,omitempty"`
	ProviderTurnID      string          `json:"providerTurnId"`
	ProviderTurnBinding json.RawMessage `json:"providerTurnBinding"`
}

type wireDescriptor struct {
	Kind             string `json:"kind"`
	Version          string `json:"version"`
	StateBindingMode string `json:"stateBindingMode"`
	ThroughTurn      bool   `json:"throughTurn"`
	FullSession      bool   `json:"fullSession"`
	Reconcile        bool   `json:"reconcile"`
	RecoverBinding   bool   `json:"recoverBinding"`
}

// describeRequest names its workspace beside the session, as every request of the protocol does,
// so an adapter checks whose provider session it is asked about without reading into it.
type describeRequest struct {
	WorkspaceID string      `json:"workspaceId"`
	Session     wireSession `json:"session"`
}

type wireProbe struct {
	Session wireSession `json:"session"`
	Turn    wireTurn    `json:"turn"`
}

type probeResponse struct {
	Forkable []bool `json:"forkable"`
}

type forkRequest struct {
	WorkspaceID string `json:"workspaceId"`
	// RequestedBy is the subject who asked for the fork; "" in open mode.
	RequestedBy     string      `json:"requestedBy"`
	OperationID     string      `json:"operationId"`
	RequestID       string      `json:"requestId"`
	Source          wireSession `json:"source"`
	ThroughTurn     wireTurn    `json:"throughTurn"`
	PrefixTurns     int         `json:"prefixTurns"`
	BoundTurns      int         `json:"boundTurns"`
	TargetSessionID string      `json:"targetSessionId"`
	TargetTitle     string      `json:"targetTitle"`
	// Target is what the child will be given: the settings, model, cwd and runtime context frozen
	// when the fork was accepted (the source's when the request named none).
	Target     wireTarget     `json:"target"`
	Descriptor wireDescriptor `json:"descriptor"`
	// Environment and ProviderTargetRef are the request's dispatch-only values, on the /fork
	// call its start made only; forkgraph never stores them, so a provider must not either.
	Environment       []forkengine.EnvironmentVariable `json:"environment,omitempty"`
	ProviderTargetRef string                           `json:"providerTargetRef,omitempty"`
}

type wireTarget struct {
	Cwd             string          `json:"cwd"`
	Model           string          `json:"model"`
	Settings        json.RawMessage `json:"settings"`
	PreparedContext json.RawMessage `json:"runtimeContext,omitempty"`
}

type forkResponse struct {
	Disposition       string                   `json:"disposition"`
	ProviderSessionID string                   `json:"providerSessionId"`
	StateBindingMode  string                   `json:"stateBindingMode"`
	TurnBindings      []forkengine.TurnBinding `json:"turnBindings"`
	Receipt           string                   `json:"receipt"`
	Error             string                   `json:"error"`
}

// reconcileRequest is what /fork sent, plus which attempt this is (1 for the first).
type reconcileRequest struct {
	forkRequest
	Attempt int `json:"attempt"`
}

type reconcileResponse struct {
	Answer            string                   `json:"answer"`
	ProviderSessionID string                   `json:"providerSessionId"`
	StateBindingMode  string                   `json:"stateBindingMode"`
	TurnBindings      []forkengine.TurnBinding `json:"turnBindings"`
	Receipt           string                   `json:"receipt"`
	Error             string                   `json:"error"`
}

// recoverBindingRequest asks where a turn whose binding was lost is in the provider's history.
type recoverBindingRequest struct {
	WorkspaceID string      `json:"workspaceId"`
	Session     wireSession `json:"session"`
	Turn        wireTurn    `json:"turn"`
	Proof       wireProof   `json:"proof"`
}

// wireProof is what the runtime recorded when it submitted the turn: its client submit id, and
// for a plain-text submission the keyed digest of the text (never the text).
type wireProof struct {
	ClientSubmitID string          `json:"clientSubmitId,omitempty"`
	TextDigest     *wireTextDigest `json:"textDigest,omitempty"`
}

type wireTextDigest struct {
	Algorithm string `json:"algorithm"`
	Key       string `json:"key"`
	Digest    string `json:"digest"`
}

type recoverBindingResponse struct {
	Answer              string          `json:"answer"`
	ProviderSessionID   string          `json:"providerSessionId"`
	ProviderTurnID      string          `json:"providerTurnId"`
	ProviderTurnBinding json.RawMessage `json:"providerTurnBinding"`
	Error               string          `json:"error"`
}

// errorBody is the shape of any error answer; describe and probe use it too.
type errorBody struct {
	Error string `json:"error"`
}

func toWireSession(s forkengine.Session) wireSession {
	settings := s.Settings
	if len(settings) == 0 {
		settings = json.RawMessage("{}")
	}
	return wireSession{
		WorkspaceID: s.WorkspaceID, ID: s.ID, Kind: string(s.Kind), Provider: s.Provider,
		ProviderSessionID: s.ProviderSessionID, Title: s.Title, Cwd: s.Cwd, Model: s.Model,
		Settings: settings,
	}
}

func toWireTurn(t forkengine.Turn) wireTurn {
	binding := t.ProviderTurnBinding
	if len(binding) == 0 {
		binding = json.RawMessage("null")
	}
	return wireTurn{
		ID: t.ID, SessionID: t.SessionID, Sequence: t.Sequence, Phase: string(t.Phase),
		Outcome: string(t.Outcome), SettledAt: t.SettledAt, ProviderTurnID: t.ProviderTurnID,
		ProviderTurnBinding: binding,
	}
}

func toWireFork(req forkengine.ForkRequest) forkRequest {
	return forkRequest{
		WorkspaceID: req.WorkspaceID, RequestedBy: req.RequestedBy, OperationID: req.OperationID, RequestID: req.RequestID,
		Source: toWireSession(req.Source), ThroughTurn: toWireTurn(req.ThroughTurn),
		PrefixTurns: req.PrefixTurns, BoundTurns: req.BoundTurns, TargetSessionID: req.TargetSessionID,
		TargetTitle: req.TargetTitle, Target: toWireTarget(req.Target), Descriptor: toWireDescriptor(req.Descriptor),
		Environment: req.Environment, ProviderTargetRef: req.ProviderTargetRef,
	}
}

func toWireTarget(t forkengine.ForkTarget) wireTarget {
	settings := t.Settings
	if len(settings) == 0 {
		settings = json.RawMessage("{}")
	}
	return wireTarget{Cwd: t.Cwd, Model: t.Model, Settings: settings, PreparedContext: t.PreparedContext}
}

func toWireDescriptor(d forkengine.Descriptor) wireDescriptor {
	return wireDescriptor{
		Kind: d.Kind, Version: d.Version, StateBindingMode: string(d.StateBindingMode),
		ThroughTurn: d.ThroughTurn, FullSession: d.FullSession, Reconcile: d.Reconcile,
		RecoverBinding: d.RecoverBinding,
	}
}

func (d wireDescriptor) domain() forkengine.Descriptor {
	return forkengine.Descriptor{
		Kind: d.Kind, Version: d.Version, StateBindingMode: forkengine.BindingMode(d.StateBindingMode),
		ThroughTurn: d.ThroughTurn, FullSession: d.FullSession, Reconcile: d.Reconcile,
		RecoverBinding: d.RecoverBinding,
	}
}
