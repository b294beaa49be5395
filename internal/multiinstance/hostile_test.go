package multiinstance

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// Issue 21's reproductions over the GraphQL API of a real server, on SQLite and on PostgreSQL
// alike: the two databases must answer the same.
func TestIssue21ReproductionsSQLite(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	issue21Reproductions(t, newSQLiteCluster(t))
}

func TestIssue21ReproductionsPostgres(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	issue21Reproductions(t, newPostgresCluster(t))
}

func issue21Reproductions(t *testing.T, c *cluster) {
	in := c.start("a")
	api := client(in)
	ctx := context.Background()
	if err := api.ReportSource(ctx, workspace, "src", "simulated", "", 1); err != nil {
		t.Fatal(err)
	}
	t.Run("NULIsRefusedAndChangesNothing", func(t *testing.T) { nulIsRefused(t, api) })
	t.Run("RejectionWithNULEndsFailed", func(t *testing.T) { rejectionWithNULEndsFailed(t, api) })
	t.Run("AnotherWorkspacesProviderSessionIsForbidden", func(t *testing.T) {
		before := workspaceState(t, api, "intruder")
		err := api.ReportSession(ctx, "intruder", "src", "simulated", "") // providerSessionId "p-src", the multi workspace's
		requireRefused(t, err, "FORBIDDEN", "provider_session_owned")
		if after := workspaceState(t, api, "intruder"); after != before {
			t.Fatalf("the refused report changed the workspace:\n%s\n%s", before, after)
		}
	})
}

// nulIsRefused sends a NUL in every free-text field the issue found failing on PostgreSQL (and
// stored on SQLite), and in a sessions filter: each is BAD_USER_INPUT with a reason, and the
// workspace reads the same after as before.
func nulIsRefused(t *testing.T, api *Client) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		query  string
		input  map[string]any
		reason string
	}{
		"title": {`mutation($input: ReportSessionInput!) { reportSession(input: $input) { id } }`,
			map[string]any{"workspaceId": workspace, "id": "src", "provider": "simulated", "title": "a\x00b"}, "invalid_text"},
		"cwd": {`mutation($input: ReportSessionInput!) { reportSession(input: $input) { id } }`,
			map[string]any{"workspaceId": workspace, "id": "new", "provider": "simulated", "cwd": "/tmp\x00"}, "invalid_text"},
		"origin": {`mutation($input: ReportTurnInput!) { reportTurn(input: $input) { id } }`,
			map[string]any{"workspaceId": workspace, "sessionId": "src", "id": "src-t2", "phase": "RUNNING", "origin": "\x00"}, "invalid_text"},
		"content": {`mutation($input: AppendMessagesInput!) { appendMessages(input: $input) { id } }`,
			map[string]any{"workspaceId": workspace, "sessionId": "src", "turnId": "src-t1",
				"messages": []any{map[string]any{"role": "USER", "content": "hi\x00there"}}}, "invalid_text"},
		"provider filter": {`query($input: SessionFilter) { sessions(workspaceId: "multi", filter: $input) { edges { node { id } } } }`,
			map[string]any{"provider": "sim\x00ulated"}, "invalid_id"},
	} {
		before := workspaceState(t, api, workspace)
		err := api.Do(ctx, tc.query, map[string]any{"input": tc.input}, nil)
		requireRefused(t, err, "BAD_USER_INPUT", tc.reason)
		if after := workspaceState(t, api, workspace); after != before {
			t.Fatalf("%s: the refused request changed the workspace:\n%s\n%s", name, before, after)
		}
	}
}

// rejectionWithNULEndsFailed is the issue's case: the simulated provider refuses the fork with an
// error text holding a NUL. The fork ends FAILED with the text made storable, never COMMITTED.
func rejectionWithNULEndsFailed(t *testing.T, api *Client) {
	ctx := context.Background()
	if err := api.ReportSource(ctx, workspace, "rejecting", "simulated", `{"simulated":{"fork":"rejected","error":"a\u0000b"}}`, 1); err != nil {
		t.Fatal(err)
	}
	op, err := api.Fork(ctx, workspace, "rejecting", "rejecting-t1", "rejected")
	if err != nil {
		t.Fatal(err)
	}
	got, err := api.AwaitOperation(ctx, workspace, op.ID, 30*time.Second, Operation.Terminal)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "FAILED" || got.Error == nil || *got.Error != "ab" {
		t.Fatalf("the refused fork ended %+v, want FAILED with error \"ab\"", got)
	}
}

func requireRefused(t *testing.T, err error, code, reason string) {
	t.Helper()
	var re *ResponseError
	if !errors.As(err, &re) || len(re.Errors) != 1 || re.Errors[0].Code() != code || re.Errors[0].Extensions["reason"] != reason {
		t.Fatalf("error %v, want one %s with reason %s", err, code, reason)
	}
}

// workspaceState renders what a refused write could have changed in a workspace: its sessions
// with their turns and messages, and the position of its event log.
func workspaceState(t *testing.T, api *Client, ws string) string {
	t.Helper()
	var out json.RawMessage
	err := api.Do(context.Background(), `query($w: ID!) { workspaceEventCursor(workspaceId: $w)
		sessions(workspaceId: $w, first: 20, filter: {includeDeleted: true}) { edges { node {
			id title cwd providerSessionId settings updatedAt
			turns(first: 20) { edges { node { id origin phase messages { id content } } } } } } } }`,
		map[string]any{"w": ws}, &out)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
