package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/internal/await"
	"github.com/forkgraph/forkgraph/internal/server"
	"github.com/forkgraph/forkgraph/internal/servertest"
	"github.com/forkgraph/forkgraph/internal/testissuer"
)

const (
	alicesToken = "alice-0123456789abcdef"
	bobsToken   = "bob-0123456789abcdef"
	carolsToken = "carol-0123456789abcdef"
)

// eventStream is a live workspaceEvents subscription over a real websocket.
type eventStream struct {
	t    *testing.T
	conn *websocket.Conn
}

// eventCursor reads the demo workspace's event cursor: streams opened after it replay every
// event from there, so none is missed while a subscription is still starting.
func eventCursor(t *testing.T, base, authorization string) string {
	t.Helper()
	var got struct{ WorkspaceEventCursor string }
	servertest.Client{T: t, Base: base, Header: http.Header{"Authorization": {authorization}}}.Must(
		`{ workspaceEventCursor(workspaceId: "demo") }`, nil, &got)
	return got.WorkspaceEventCursor
}

// subscribeEvents opens a graphql-transport-ws connection with authorization in connection_init
// and subscribes to the demo workspace's events after the cursor.
func subscribeEvents(t *testing.T, base, authorization, after string) *eventStream {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/graphql", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = conn.Close() })
	s := &eventStream{t: t, conn: conn}
	require.NoError(t, conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"authorization": authorization}}))
	require.Equal(t, "connection_ack", s.next(10*time.Second).Type)
	require.NoError(t, conn.WriteJSON(map[string]any{"id": "e", "type": "subscribe", "payload": map[string]any{
		"query":     `subscription($after: String) { workspaceEvents(workspaceId: "demo", after: $after) { cursor sessionId } }`,
		"variables": map[string]any{"after": after}}}))
	return s
}

type wsFrame struct {
	Type    string
	Payload json.RawMessage
}

// next reads the next message (answering pings), or returns the close error as err.
func (s *eventStream) next(limit time.Duration) wsFrame {
	s.t.Helper()
	f, err := s.read(limit)
	require.NoError(s.t, err)
	return f
}

func (s *eventStream) read(limit time.Duration) (wsFrame, error) {
	for {
		_ = s.conn.SetReadDeadline(time.Now().Add(limit))
		var f wsFrame
		if err := s.conn.ReadJSON(&f); err != nil {
			return f, err
		}
		if f.Type == "ping" {
			_ = s.conn.WriteJSON(map[string]any{"type": "pong"})
			continue
		}
		return f, nil
	}
}

// awaitClose reads until the server closes the connection and returns the close and when.
func (s *eventStream) awaitClose(limit time.Duration) (*websocket.CloseError, time.Time) {
	s.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		_, err := s.read(time.Until(deadline))
		if err == nil {
			continue
		}
		at := time.Now()
		var ce *websocket.CloseError
		require.True(s.t, errors.As(err, &ce), "want a close frame, got %v", err)
		return ce, at
	}
}

// sseEvents opens an SSE stream (distinct connections) of the demo workspace's live events and
// delivers its events, each with the time it arrived.
type timedEvent struct {
	name, data string
	at         time.Time
}

func openSSEEvents(t *testing.T, base, authorization, after string) <-chan timedEvent {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"query": `subscription($after: String) { workspaceEvents(workspaceId: "demo", after: $after) { cursor } }`,
		"variables": map[string]any{"after": after}})
	require.NoError(t, err)
	body := string(raw)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", authorization)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	events := make(chan timedEvent, 16)
	go func() {
		defer close(events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ev timedEvent
		for sc.Scan() {
			switch line := sc.Text(); {
			case line == "" && ev.name != "":
				ev.at = time.Now()
				events <- ev
				ev = timedEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data:"):
				ev.data = strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			}
		}
	}()
	return events
}

func nextTimed(t *testing.T, events <-chan timedEvent, limit time.Duration) timedEvent {
	t.Helper()
	select {
	case ev, ok := <-events:
		require.True(t, ok, "the stream ended without an event")
		return ev
	case <-time.After(limit):
		t.Fatal("no event")
		return timedEvent{}
	}
}

// reportAs reports a session of the demo workspace with authorization and returns the error
// codes of the answer.
func reportAs(t *testing.T, base, authorization, id string) []string {
	t.Helper()
	c := servertest.Client{T: t, Base: base, Header: http.Header{"Authorization": {authorization}}}
	return c.Do(`mutation($id: ID!) { reportSession(input: {workspaceId: "demo", id: $id, provider: "simulated"}) { id } }`,
		map[string]any{"id": id}, nil)
}

// A subscription opened with a JWT that expires in 3 s ends within a second of its exp, on a
// websocket (close 4403 TOKEN_EXPIRED) and over SSE (a last TOKEN_EXPIRED event, then
// complete); a stream opened with a longer token runs on.
func TestStreamsEndWhenTheirJWTExpires(t *testing.T) {
	// Not parallel: it holds the server to a second around the expiry, which other servers
	// working beside it on two cores could make it miss.
	iss := testissuer.New(t)
	base, _ := startServer(t, filepath.Join(t.TempDir(), "fg.db"), "-oidc-issuer", iss.URL(),
		"-jwt-audience", testissuer.Audience, "-jwt-clock-skew", "0s")
	short := iss.Mint("rsa-1", testissuer.Claims{Subject: "shorty", Scope: "read", ExpiresIn: 3 * time.Second})
	long := iss.Mint("ec-1", testissuer.Claims{Subject: "stayer", Scope: "read ingest"})
	var claims struct {
		Exp int64 `json:"exp"`
	}
	decodeClaims(t, short, &claims)
	exp := time.Unix(claims.Exp, 0)

	cursor := eventCursor(t, base, "Bearer "+long)
	expiring := subscribeEvents(t, base, "Bearer "+short, cursor)
	staying := subscribeEvents(t, base, "Bearer "+long, cursor)
	sse := openSSEEvents(t, base, "Bearer "+short, cursor)

	closed, at := expiring.awaitClose(10 * time.Second)
	require.Equal(t, 4403, closed.Code)
	require.Equal(t, "TOKEN_EXPIRED", closed.Text)
	require.False(t, at.Before(exp), "not before exp (%s < %s)", at, exp)
	require.Less(t, at.Sub(exp), time.Second, "within a second of exp")

	last := nextTimed(t, sse, 10*time.Second)
	require.Equal(t, "next", last.name)
	require.Contains(t, last.data, `"code":"TOKEN_EXPIRED"`)
	require.Less(t, last.at.Sub(exp), time.Second)
	require.Equal(t, "complete", nextTimed(t, sse, 5*time.Second).name)

	require.Empty(t, reportAs(t, base, "Bearer "+long, "after-expiry"))
	f := staying.next(10 * time.Second)
	require.Equal(t, "next", f.Type, "the other stream runs on: %s", f.Payload)
	require.Contains(t, string(f.Payload), "after-expiry")

	codes := servertest.Client{T: t, Base: base, Token: short}.Do(`{ viewer { subject } }`, nil, nil)
	require.Equal(t, []string{"UNAUTHENTICATED"}, codes, "and the token is refused from then on")
}

func decodeClaims(t *testing.T, token string, out any) {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3)
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, out))
}

// A token removed from the tokens file ends its streams within a second, on a websocket
// (4403 TOKEN_REVOKED) and over SSE; the other tokens' streams run on, and it is refused.
func TestRemovedTokenEndsItsStreams(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tokens")
	writeTokens(t, path, "alice "+alicesToken+" demo read\nbob "+bobsToken+" demo read,ingest\n")
	base, _ := startServer(t, filepath.Join(t.TempDir(), "fg.db"), "-tokens-file", path)
	cursor := eventCursor(t, base, "Bearer "+bobsToken)
	alice := subscribeEvents(t, base, "Bearer "+alicesToken, cursor)
	bob := subscribeEvents(t, base, "Bearer "+bobsToken, cursor)
	aliceSSE := openSSEEvents(t, base, "Bearer "+alicesToken, cursor)
	require.Empty(t, reportAs(t, base, "Bearer "+bobsToken, "before"))
	require.Equal(t, "next", alice.next(10*time.Second).Type, "alice's stream is live")
	require.Equal(t, "next", bob.next(10*time.Second).Type)
	require.Equal(t, "next", nextTimed(t, aliceSSE, 10*time.Second).name)

	removed := time.Now()
	writeTokens(t, path, "bob "+bobsToken+" demo read,ingest\n")
	closed, at := alice.awaitClose(10 * time.Second)
	require.Equal(t, 4403, closed.Code)
	require.Equal(t, "TOKEN_REVOKED", closed.Text)
	require.Less(t, at.Sub(removed), time.Second, "within a second of the file's change")
	last := nextTimed(t, aliceSSE, 10*time.Second)
	require.Contains(t, last.data, `"code":"TOKEN_REVOKED"`)
	require.Less(t, last.at.Sub(removed), time.Second)

	require.Empty(t, reportAs(t, base, "Bearer "+bobsToken, "after"))
	f := bob.next(10 * time.Second)
	require.Equal(t, "next", f.Type)
	require.Contains(t, string(f.Payload), "after", "bob's stream runs on")
	require.Equal(t, []string{"UNAUTHENTICATED"}, servertest.Client{T: t, Base: base, Token: alicesToken}.Do(`{ viewer { subject } }`, nil, nil))
}

func writeTokens(t *testing.T, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(text), 0o600))
	require.NoError(t, os.Rename(tmp, path)) // as a secrets manager swaps the file
}

// SIGHUP reloads the tokens file (here the only way: its change is not polled for); a file
// that does not parse keeps the tokens in force, says why in the log, and is counted.
func TestTokensFileReloadsOnSIGHUP(t *testing.T) {
	// Not parallel: the SIGHUP goes to the whole test process, and so to every server in it.
	path := filepath.Join(t.TempDir(), "tokens")
	writeTokens(t, path, "alice "+alicesToken+" demo read,ingest\n")
	var logs syncBuffer
	base, _ := startServerWith(t, func(string) string { return "" }, &logs, filepath.Join(t.TempDir(), "fg.db"),
		"-tokens-file", path, "-tokens-file-poll", "1h", "-log-format", "json")
	carol := servertest.Client{T: t, Base: base, Token: carolsToken}
	require.Equal(t, []string{"UNAUTHENTICATED"}, carol.Do(`{ viewer { subject } }`, nil, nil))

	writeTokens(t, path, "alice "+alicesToken+" demo read,ingest\ncarol "+carolsToken+" demo read\n")
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	await.Until(t, 5*time.Second, "carol's token is accepted", func() bool { return carol.Do(`{ viewer { subject } }`, nil, nil) == nil })

	writeTokens(t, path, "carol "+carolsToken+" demo read\nnot a valid line\n")
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	await.Until(t, 5*time.Second, "the refusal is logged", func() bool { return strings.Contains(logs.String(), "tokens file refused") })
	alice := servertest.Client{T: t, Base: base, Token: alicesToken}
	var who struct{ Viewer struct{ Subject string } }
	alice.Must(`{ viewer { subject } }`, nil, &who)
	require.Equal(t, "alice", who.Viewer.Subject, "a bad file keeps the tokens in force")
	require.Empty(t, reportAs(t, base, "Bearer "+alicesToken, "logged"))

	_, families := scrape(t, base)
	require.Equal(t, 1.0, sample(families, "forkgraph_credential_refreshes_total", labels("source", "tokens_file", "outcome", "error")))
	require.Equal(t, 2.0, sample(families, "forkgraph_credential_refreshes_total", labels("source", "tokens_file", "outcome", "ok")))
	require.Equal(t, 2.0, sample(families, "forkgraph_credential_keys", labels("source", "tokens_file")))
	out := logs.String()
	require.Contains(t, out, `"subject":"alice"`, "request logs name the subject")
	for _, secret := range []string{alicesToken, carolsToken} {
		require.NotContains(t, out, secret, "never the token")
	}
}

// Bad credentials stop the start with a message naming the flag, and never the token.
func TestCredentialConfigRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte("a "+alicesToken+" demo read\nb "+alicesToken+" demo fork\n"), 0o600))
	for name, args := range map[string][]string{
		"a short -tokens token":           {"-tokens", "tokA=demo"},
		"a token listed twice":            {"-tokens", alicesToken + "=ws1," + alicesToken + "=ws2"},
		"a tokens file listing one twice": {"-tokens-file", bad},
		"a missing tokens file":           {"-tokens-file", filepath.Join(dir, "missing")},
		"JWTs without an audience":        {"-oidc-issuer", "https://id.example"},
		"HS256":                           {"-jwks-url", "https://id.example/jwks", "-jwt-audience", "a", "-jwt-algorithms", "HS256"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			err := server.Run(context.Background(), append([]string{"-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "fg.db")}, args...),
				server.Options{Stderr: &stderr})
			require.Error(t, err)
			require.NotContains(t, err.Error(), alicesToken)
		})
	}
}
