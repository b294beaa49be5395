package adaptere2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"
)

// gqlError is one GraphQL error with the extensions the API promises.
type gqlError struct {
	Message    string `json:"message"`
	Extensions struct {
		Code      string `json:"code"`
		Reason    string `json:"reason"`
		Retryable bool   `json:"retryable"`
	} `json:"extensions"`
}

var client = &http.Client{Timeout: 30 * time.Second}

// gql posts one operation to base/graphql and decodes data into out; it returns the errors.
func gql(t *testing.T, base, query string, vars map[string]any, out any) []gqlError {
	t.Helper()
	payload, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Post(base+"/graphql", "application/json", bytes.NewReader(payload))
	if err != nil {
		t.Fatalf("POST /graphql: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("decode /graphql answer (HTTP %d): %v", resp.StatusCode, err)
	}
	if out != nil && len(body.Data) > 0 && string(body.Data) != "null" {
		if err := json.Unmarshal(body.Data, out); err != nil {
			t.Fatalf("decode data %s: %v", body.Data, err)
		}
	}
	return body.Errors
}

// mustGQL is gql for operations that must succeed.
func mustGQL(t *testing.T, base, query string, vars map[string]any, out any) {
	t.Helper()
	if errs := gql(t, base, query, vars, out); len(errs) > 0 {
		t.Fatalf("GraphQL errors: %+v", errs)
	}
}

const workspace = "e2e"

// reportForkableSession reports a root session of provider webhook with one settled, bound turn
// and its messages, and returns the turn id.
func reportForkableSession(t *testing.T, base, id string) string {
	t.Helper()
	mustGQL(t, base, `mutation($in: ReportSessionInput!) { reportSession(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": workspace, "id": id, "provider": "webhook",
			"providerSessionId": "thread-" + id, "title": "Plan the migration"}}, nil)
	turn := id + "-t1"
	mustGQL(t, base, `mutation($in: ReportTurnInput!) { reportTurn(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": workspace, "sessionId": id, "id": turn,
			"phase": "SETTLED", "outcome": "COMPLETED", "providerTurnId": "pt-" + turn,
			"providerTurnBinding": map[string]any{"rollout": "r-" + turn}}}, nil)
	mustGQL(t, base, `mutation($in: AppendMessagesInput!) { appendMessages(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": workspace, "sessionId": id, "turnId": turn,
			"messages": []map[string]any{{"role": "USER", "content": "plan it"}, {"role": "ASSISTANT", "content": "done"}}}}, nil)
	return turn
}

const forkMutation = `mutation($in: ForkSessionInput!) { forkSession(input: $in) { id status phase } }`

func forkInput(source, turn, requestID string) map[string]any {
	return map[string]any{"in": map[string]any{"workspaceId": workspace, "sourceSessionId": source,
		"throughTurnId": turn, "requestId": requestID}}
}

// operation is what the tests read of a ForkOperation.
type operation struct {
	ID                string `json:"id"`
	Status            string `json:"status"`
	Phase             string `json:"phase"`
	Error             string `json:"error"`
	ErrorReason       string `json:"errorReason"`
	ReconcileAttempts int    `json:"reconcileAttempts"`
	LastReconciledAt  string `json:"lastReconciledAt"`
	Session           *struct {
		ID                string `json:"id"`
		ProviderSessionID string `json:"providerSessionId"`
	} `json:"session"`
	Lineage *struct {
		SourceSessionID string `json:"sourceSessionId"`
	} `json:"lineage"`
}

// adapterState is the part of the adapter's state file the tests read.
type adapterState struct {
	Sessions map[string]struct {
		WorkspaceID string `json:"workspaceId"`
		RequestID   string `json:"requestId"`
	} `json:"sessions"`
	Requests map[string]map[string]struct {
		Outcome        string `json:"outcome"`
		ChildID        string `json:"childProviderSessionId"`
		ForkDeliveries int    `json:"forkDeliveries"`
		Reconciles     int    `json:"reconciles"`
	} `json:"requests"`
}

// readAdapterState reads the file; it is replaced by rename, so a read never sees half a write.
// A file not written yet is an empty state.
func readAdapterState(t *testing.T, path string) adapterState {
	t.Helper()
	var st adapterState
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return st
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("adapter state %s: %v", path, err)
	}
	return st
}

// children counts the adapter's provider sessions made for a request id of the workspace.
func (st adapterState) children(requestID string) int {
	n := 0
	for _, s := range st.Sessions {
		if s.WorkspaceID == workspace && s.RequestID == requestID {
			n++
		}
	}
	return n
}
