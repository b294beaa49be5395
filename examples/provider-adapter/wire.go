package main

import "encoding/json"

// The wire types are the webhook protocol's JSON shapes (docs/providers.md in forkgraph). They are
// this program's own, not imported from forkgraph, so an adapter copied elsewhere builds alone;
// only the fields the adapter reads are declared, and unknown fields are ignored.

// wireSession is a forkgraph session as the adapter receives it.
type wireSession struct {
	WorkspaceID       string          `json:"workspaceId"`
	ID                string          `json:"id"`
	Provider          string          `json:"provider"`
	ProviderSessionID string          `json:"providerSessionId"`
	Title             string          `json:"title"`
	Settings          json.RawMessage `json:"settings"`
}

// wireTurn is a forkgraph turn; providerTurnBinding is the object this adapter's provider gave
// the turn (null when none).
type wireTurn struct {
	ID                  string          `json:"id"`
	SessionID           string          `json:"sessionId"`
	Sequence            int64           `json:"sequence"`
	Phase               string          `json:"phase"`
	ProviderTurnID      string          `json:"providerTurnId"`
	ProviderTurnBinding json.RawMessage `json:"providerTurnBinding"`
}

// descriptor says what the adapter can do; reconcile: true promises a truthful /reconcile, and
// recoverBinding: true a /recover-binding that only reads the provider's history.
type descriptor struct {
	Kind             string `json:"kind"`
	Version          string `json:"version"`
	StateBindingMode string `json:"stateBindingMode"`
	ThroughTurn      bool   `json:"throughTurn"`
	FullSession      bool   `json:"fullSession"`
	Reconcile        bool   `json:"reconcile"`
	RecoverBinding   bool   `json:"recoverBinding"`
}

type describeRequest struct {
	WorkspaceID string      `json:"workspaceId"`
	Session     wireSession `json:"session"`
}

// probeRequest is one workspace's probes: forkgraph sends one request per workspace.
type probeRequest struct {
	WorkspaceID string `json:"workspaceId"`
	Probes      []struct {
		Session wireSession `json:"session"`
		Turn    wireTurn    `json:"turn"`
	} `json:"probes"`
}

type probeResponse struct {
	Forkable []bool `json:"forkable"`
}

// forkRequest is the body of /fork, and of /reconcile with Attempt set.
type forkRequest struct {
	WorkspaceID     string      `json:"workspaceId"`
	OperationID     string      `json:"operationId"`
	RequestID       string      `json:"requestId"`
	Source          wireSession `json:"source"`
	ThroughTurn     wireTurn    `json:"throughTurn"`
	PrefixTurns     int         `json:"prefixTurns"`
	BoundTurns      int         `json:"boundTurns"`
	TargetSessionID string      `json:"targetSessionId"`
	TargetTitle     string      `json:"targetTitle"`
	// Target is what the child runs with: the settings, model, cwd and runtime context forkgraph
	// froze for it (the source's when the fork named none).
	Target     wireTarget `json:"target"`
	Descriptor descriptor `json:"descriptor"`
	Attempt    int        `json:"attempt,omitempty"`
	// Environment and ProviderTargetRef come only with the /fork call the request started, for
	// the process that runs the child; this adapter starts none, and never writes them down.
	Environment       []environmentVariable `json:"environment,omitempty"`
	ProviderTargetRef string                `json:"providerTargetRef,omitempty"`
}

// wireTarget is the child's frozen settings and context.
type wireTarget struct {
	Cwd             string          `json:"cwd"`
	Model           string          `json:"model"`
	Settings        json.RawMessage `json:"settings"`
	PreparedContext json.RawMessage `json:"runtimeContext,omitempty"`
}

type environmentVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// forkResponse answers /fork. host_copy: no turnBindings, no receipt.
type forkResponse struct {
	Disposition       string `json:"disposition"`
	ProviderSessionID string `json:"providerSessionId,omitempty"`
	StateBindingMode  string `json:"stateBindingMode,omitempty"`
	Error             string `json:"error,omitempty"`
}

// reconcileResponse answers /reconcile: found (with the child), absent or unknown.
type reconcileResponse struct {
	Answer            string `json:"answer"`
	ProviderSessionID string `json:"providerSessionId,omitempty"`
	StateBindingMode  string `json:"stateBindingMode,omitempty"`
	Error             string `json:"error,omitempty"`
}

// recoverBindingRequest is the body of /recover-binding: a turn whose binding forkgraph lost,
// and the proof recorded when it was submitted.
type recoverBindingRequest struct {
	WorkspaceID string      `json:"workspaceId"`
	Session     wireSession `json:"session"`
	Turn        wireTurn    `json:"turn"`
	Proof       wireProof   `json:"proof"`
}

// wireProof is the client submit id and, for a plain-text prompt, its keyed digest in hex.
type wireProof struct {
	ClientSubmitID string `json:"clientSubmitId"`
	TextDigest     *struct {
		Algorithm string `json:"algorithm"`
		Key       string `json:"key"`
		Digest    string `json:"digest"`
	} `json:"textDigest"`
}

// recoverBindingResponse answers /recover-binding: found (with the turn), absent or ambiguous.
type recoverBindingResponse struct {
	Answer              string          `json:"answer"`
	ProviderSessionID   string          `json:"providerSessionId,omitempty"`
	ProviderTurnID      string          `json:"providerTurnId,omitempty"`
	ProviderTurnBinding json.RawMessage `json:"providerTurnBinding,omitempty"`
	Error               string          `json:"error,omitempty"`
}

// submitRequest is the body of /submit, the provider's own API for a runtime's prompt.
type submitRequest struct {
	WorkspaceID       string `json:"workspaceId"`
	ProviderSessionID string `json:"providerSessionId"`
	ClientSubmitID    string `json:"clientSubmitId"`
	Content           string `json:"content"`
	Text              string `json:"text"`
}

// submitResponse is the provider turn the prompt became, as the runtime reports it to forkgraph.
type submitResponse struct {
	ProviderTurnID      string          `json:"providerTurnId"`
	ProviderTurnBinding json.RawMessage `json:"providerTurnBinding"`
}

// resumeRequest is the body of /resume: a runtime resuming forkgraph session sessionId, which
// is provider session providerSessionId of this provider.
type resumeRequest struct {
	WorkspaceID       string `json:"workspaceId"`
	SessionID         string `json:"sessionId"`
	ProviderSessionID string `json:"providerSessionId"`
}

// resumeResponse says whether the session was resumed, and forkgraph's verification.
type resumeResponse struct {
	Resumed bool   `json:"resumed"`
	Status  string `json:"status,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Error   string `json:"error,omitempty"`
}

// errorResponse is the body of an answer that is not the call's normal shape.
type errorResponse struct {
	Error string `json:"error"`
}

// Protocol values.
const (
	operationHeader = "Forkgraph-Operation-Id"
	hostCopy        = "host_copy"

	dispositionAccepted = "accepted"
	dispositionRejected = "rejected"

	answerFound  = "found"
	answerAbsent = "absent"
)
