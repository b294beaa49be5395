package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/internal/server"
	"github.com/forkgraph/forkgraph/internal/servertest"
)

// startServer runs the real server (servertest.Start) and returns its base URL and the function
// that stops it and returns Run's error.
func startServer(t *testing.T, dbPath string, extra ...string) (string, func() error) {
	t.Helper()
	s := servertest.Start(t, dbPath, extra...)
	return s.URL, s.Stop
}

// startServerWith is startServer with the environment and the log output (stderr) given.
func startServerWith(t *testing.T, getenv func(string) string, stderr io.Writer, dbPath string, extra ...string) (string, func() error) {
	t.Helper()
	s := servertest.StartWith(t, servertest.Options{Getenv: getenv, Stderr: stderr}, dbPath, extra...)
	return s.URL, s.Stop
}

func TestServerForkFlow(t *testing.T) {
	t.Parallel()
	serverForkFlow(t, servertest.SQLite(t))
}

// TestServerForkFlowOnPostgreSQL is the same flow with the server on PostgreSQL
// (scripts/test-postgres.sh runs it).
func TestServerForkFlowOnPostgreSQL(t *testing.T) {
	t.Parallel()
	serverForkFlow(t, servertest.Postgres(t))
}

// serverForkFlow reports a session, forks it, follows the fork over a websocket to its commit,
// reads the child, acknowledges, and shuts the server on db down with a subscription open.
func serverForkFlow(t *testing.T, db string) {
	base, stop := startServer(t, db, "-no-seed")
	api := servertest.Client{T: t, Base: base}

	seedForkSource(api)

	var forked struct {
		ForkSession struct{ ID, Status, Phase, TargetSessionID string }
	}
	api.Must(`mutation { forkSession(input: {workspaceId: "w", sourceSessionId: "s", throughTurnId: "t2", requestId: "r1"}) {
		id status phase targetSessionId } }`, nil, &forked)
	require.Equal(t, "ACCEPTED", forked.ForkSession.Status)

	phases := api.FollowFork("w", forked.ForkSession.ID, nil)
	t.Logf("phases seen over the websocket: %v", phases)
	require.Equal(t, "COMMITTED", phases[len(phases)-1], "phases: %v", phases)
	order := map[string]int{"FROZEN": 1, "DISPATCHING": 2, "MATERIALIZING": 3, "COMMITTED": 4}
	for i := 1; i < len(phases); i++ {
		require.Less(t, order[phases[i-1]], order[phases[i]], "phases move forward: %v", phases)
	}

	var target struct {
		Session struct {
			ForkedFrom struct{ SourceTurnID string }
			Turns      struct {
				Edges []struct {
					Node struct {
						ID       string
						Messages []struct{ Role, Content string }
					}
				}
			}
		}
	}
	api.Must(`query($id: ID!) { session(workspaceId: "w", id: $id) { forkedFrom { sourceTurnId }
		turns { edges { node { id messages { role content } } } } } }`, map[string]any{"id": forked.ForkSession.TargetSessionID}, &target)
	require.Equal(t, "t2", target.Session.ForkedFrom.SourceTurnID)
	turns := target.Session.Turns.Edges
	require.Len(t, turns, 2, "exactly the turns through the boundary")
	for i, e := range turns {
		n := fmt.Sprintf("t%d", i+1)
		require.Equal(t, []struct{ Role, Content string }{{"USER", "question " + n}, {"ASSISTANT", "answer " + n}}, e.Node.Messages)
	}

	var acked struct {
		AcknowledgeForkOperation struct{ AcknowledgedAt *string }
	}
	api.Must(`mutation($id: ID!) { acknowledgeForkOperation(workspaceId: "w", id: $id) { acknowledgedAt } }`,
		map[string]any{"id": forked.ForkSession.ID}, &acked)
	require.NotNil(t, acked.AcknowledgeForkOperation.AcknowledgedAt)

	open := dialEvents(t, base, "w")
	require.NoError(t, stop(), "clean shutdown, with a subscription still open")
	var err error
	for err == nil { // a last message (e.g. the stream's end) may precede the close frame
		_, _, err = open.ReadMessage()
	}
	var closed *websocket.CloseError
	require.ErrorAs(t, err, &closed, "the server closed the websocket")
	require.Equal(t, websocket.CloseGoingAway, closed.Code)
	_, err = http.Get(base + "/healthz")
	require.Error(t, err, "the listener is closed")
}

// dialEvents opens a websocket with a live workspaceEvents subscription.
func dialEvents(t *testing.T, base, ws string) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/graphql", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = conn.Close() })
	require.NoError(t, conn.WriteJSON(map[string]any{"type": "connection_init"}))
	var ack struct{ Type string }
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	require.NoError(t, conn.ReadJSON(&ack))
	require.Equal(t, "connection_ack", ack.Type)
	require.NoError(t, conn.WriteJSON(map[string]any{"id": "e", "type": "subscribe", "payload": map[string]any{
		"query": `subscription($ws: ID!) { workspaceEvents(workspaceId: $ws) { cursor } }`, "variables": map[string]any{"ws": ws},
	}}))
	return conn
}

func TestServerSeedsDemoOnce(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "fg.db")
	count := func(base string) (sessions, forks int) {
		var got struct {
			Sessions       struct{ TotalCount int }
			ForkOperations struct {
				TotalCount int
				Edges      []struct {
					Node struct {
						Status         string
						AcknowledgedAt *string
					}
				}
			}
		}
		servertest.Client{T: t, Base: base}.Must(`{ sessions(workspaceId: "demo") { totalCount }
			forkOperations(workspaceId: "demo") { totalCount edges { node { status acknowledgedAt } } } }`, nil, &got)
		for _, e := range got.ForkOperations.Edges {
			require.Equal(t, "COMMITTED", e.Node.Status)
			require.NotNil(t, e.Node.AcknowledgedAt, "the seeded fork leaves its boundary free")
		}
		return got.Sessions.TotalCount, got.ForkOperations.TotalCount
	}
	base, stop := startServer(t, db)
	sessions, forks := count(base)
	require.NoError(t, stop())
	require.Equal(t, 1, forks)
	require.Greater(t, sessions, 3)

	base, stop = startServer(t, db)
	again, forksAgain := count(base)
	require.NoError(t, stop())
	require.Equal(t, sessions, again, "a restart seeds nothing new")
	require.Equal(t, forks, forksAgain)
}

// TestSecondServerOnOneSQLiteFileIsRefused: SQLite is single-process, so a second instance on a
// file another one serves stops at start with an error that says why, before it recovers
// anything.
func TestSecondServerOnOneSQLiteFileIsRefused(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "forkgraph.db")
	startServer(t, dbPath)
	err := server.Run(context.Background(), []string{"-addr", "127.0.0.1:0", "-db", dbPath}, server.Options{})
	require.ErrorContains(t, err, "in use by another forkgraph process")
	require.ErrorContains(t, err, "postgres://")
}

// seedForkSource reports session s of workspace w: three settled, bound turns t1…t3 of a
// question and an answer each, a source to fork.
func seedForkSource(api servertest.Client) {
	api.Must(`mutation { reportSession(input: {workspaceId: "w", id: "s", provider: "simulated",
		providerSessionId: "p-s", title: "Source"}) { id } }`, nil, nil)
	for i := 1; i <= 3; i++ {
		turn := fmt.Sprintf("t%d", i)
		api.Must(`mutation($id: ID!, $ptid: String!) { reportTurn(input: {workspaceId: "w", sessionId: "s", id: $id,
			phase: SETTLED, outcome: COMPLETED, providerTurnId: $ptid, providerTurnBinding: {n: 1}}) { id } }`,
			map[string]any{"id": turn, "ptid": "p-" + turn}, nil)
		api.Must(`mutation($turn: ID!, $q: String!, $a: String!) { appendMessages(input: {workspaceId: "w", sessionId: "s",
			turnId: $turn, messages: [{role: USER, content: $q}, {role: ASSISTANT, content: $a}]}) { id } }`,
			map[string]any{"turn": turn, "q": "question " + turn, "a": "answer " + turn}, nil)
	}
}
