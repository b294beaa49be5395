package adaptere2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/forkgraph/forkgraph/internal/await"
)

// submitToProvider sends a prompt to the reference adapter's own API (POST /submit), as an agent
// runtime does before it reports the turn to forkgraph, and returns the provider turn id.
func submitToProvider(t *testing.T, adapterBase, psid, submitID, content, text string) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"workspaceId": workspace, "providerSessionId": psid,
		"clientSubmitId": submitID, "content": content, "text": text})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Post(adapterBase+"/submit", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST /submit: %v", err)
	}
	defer resp.Body.Close()
	var out struct {
		ProviderTurnID string `json:"providerTurnId"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || out.ProviderTurnID == "" {
		t.Fatalf("POST /submit answered %d %+v (%v)", resp.StatusCode, out, err)
	}
	return out.ProviderTurnID
}

// turnBinding is what the tests read of a turn.
type turnBinding struct {
	ProviderForkBindingAvailable bool   `json:"providerForkBindingAvailable"`
	ProviderForkBindingState     string `json:"providerForkBindingState"`
}

func readTurnBinding(t *testing.T, base, turn string) turnBinding {
	t.Helper()
	var out struct{ Node turnBinding }
	mustGQL(t, base, `query($id: ID!) { node(id: $id) { ... on Turn { providerForkBindingAvailable providerForkBindingState } } }`,
		map[string]any{"id": "Turn:" + workspace + ":" + turn}, &out)
	return out.Node
}

// TestBindingRecoveryWithTheReferenceAdapter runs binding recovery between a real forkgraph server
// and the reference adapter as processes: a runtime submits prompts to the adapter, then reports
// the turns to forkgraph without their bindings (as one that crashed in between would), with the
// proof. A turn whose submit id, or plain text, the adapter finds once becomes forkable through
// recovery and commits; an ambiguous proof fails closed; a proof that finds a provider turn
// another turn of the session is bound to is refused; none of them changes the turn otherwise.
func TestBindingRecoveryWithTheReferenceAdapter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	adapter := start(t, "provider-adapter", adapterBin, "-addr", "127.0.0.1:0", "-state", filepath.Join(dir, "adapter.json"))
	server := start(t, "forkgraph", serverBin, "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "forkgraph.db"),
		"-no-seed", "-webhook-url", adapter.base)
	const source, psid = "runtime-session", "thread-runtime"
	mustGQL(t, server.base, `mutation($in: ReportSessionInput!) { reportSession(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"workspaceId": workspace, "id": source, "provider": "webhook",
			"providerSessionId": psid, "title": "Runtime"}}, nil)
	report := func(turn string, in map[string]any) []gqlError {
		in["workspaceId"], in["sessionId"], in["id"], in["phase"], in["outcome"] = workspace, source, turn, "SETTLED", "COMPLETED"
		return gql(t, server.base, `mutation($in: ReportTurnInput!) { reportTurn(input: $in) { id } }`, map[string]any{"in": in}, nil)
	}
	fork := func(turn string) (operation, []gqlError) {
		var out struct{ ForkSession operation }
		errs := gql(t, server.base, forkMutation, forkInput(source, turn, "req-"+turn), &out)
		return out.ForkSession, errs
	}
	requireRefused := func(turn string) {
		t.Helper()
		_, errs := fork(turn)
		if len(errs) != 1 || errs[0].Extensions.Code != "FORK_CONFLICT" || errs[0].Extensions.Reason != "provider_turn_missing" {
			t.Fatalf("fork through %s: %+v, want FORK_CONFLICT provider_turn_missing", turn, errs)
		}
		if got := readTurnBinding(t, server.base, turn); got.ProviderForkBindingState != "RECOVERY_REQUIRED" {
			t.Fatalf("%s after a refused recovery: %+v", turn, got)
		}
	}
	requireCommitted := func(turn string) {
		t.Helper()
		if got := readTurnBinding(t, server.base, turn); got.ProviderForkBindingState != "RECOVERY_REQUIRED" {
			t.Fatalf("%s before the fork: %+v, want RECOVERY_REQUIRED", turn, got)
		}
		op, errs := fork(turn)
		if len(errs) > 0 {
			t.Fatalf("fork through %s: %+v", turn, errs)
		}
		await.State(t, committedWithin, "the fork through "+turn+" to commit", func() (bool, string) {
			got := readOperation(t, server.base, op.ID)
			return got.Status == "COMMITTED", fmt.Sprintf("%+v", got)
		})
		if got := readTurnBinding(t, server.base, turn); !got.ProviderForkBindingAvailable || got.ProviderForkBindingState != "BOUND" {
			t.Fatalf("%s after recovery: %+v, want BOUND", turn, got)
		}
	}

	// Found by its submit id.
	submitToProvider(t, adapter.base, psid, "submit-1", "multimodal", "")
	if errs := report("turn-1", map[string]any{"submission": map[string]any{"clientSubmitId": "submit-1", "content": "MULTIMODAL"}}); len(errs) > 0 {
		t.Fatal(errs)
	}
	requireCommitted("turn-1")

	// Found by the keyed digest of its plain text: forkgraph sends the key and the digest, the
	// adapter digests its own prompts.
	submitToProvider(t, adapter.base, psid, "", "plain_text", "Summarise the incident report")
	submitToProvider(t, adapter.base, psid, "", "plain_text", "Summarise the incident report, shorter")
	if errs := report("turn-2", map[string]any{"submission": map[string]any{"content": "PLAIN_TEXT",
		"text": "Summarise the incident report"}}); len(errs) > 0 {
		t.Fatal(errs)
	}
	requireCommitted("turn-2")

	// Ambiguous: the provider has two turns with this submit id, so neither is trusted.
	submitToProvider(t, adapter.base, psid, "submit-twice", "multimodal", "")
	submitToProvider(t, adapter.base, psid, "submit-twice", "multimodal", "")
	if errs := report("turn-3", map[string]any{"submission": map[string]any{"clientSubmitId": "submit-twice", "content": "MULTIMODAL"}}); len(errs) > 0 {
		t.Fatal(errs)
	}
	requireRefused("turn-3")

	// Owned by another turn: turn-4 is reported bound to the provider turn of submit-4; turn-5
	// claims the same submit id, and what recovery finds is turn-4's provider turn.
	owned := submitToProvider(t, adapter.base, psid, "submit-4", "multimodal", "")
	if errs := report("turn-4", map[string]any{"providerTurnId": owned, "providerTurnBinding": map[string]any{"turn": owned}}); len(errs) > 0 {
		t.Fatal(errs)
	}
	if errs := report("turn-5", map[string]any{"submission": map[string]any{"clientSubmitId": "submit-4", "content": "MULTIMODAL"}}); len(errs) > 0 {
		t.Fatal(errs)
	}
	requireRefused("turn-5")
	// ... and a report naming it is refused the same way.
	errs := report("turn-5", map[string]any{"providerTurnId": owned, "providerTurnBinding": map[string]any{"turn": owned}})
	if len(errs) != 1 || errs[0].Extensions.Code != "BAD_USER_INPUT" || errs[0].Extensions.Reason != "provider_turn_duplicate" {
		t.Fatalf("reporting turn-5 bound to turn-4's provider turn: %+v", errs)
	}
}
