package transports

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/vektah/gqlparser/v2/gqlerror"
)

// credentials are test credentials whose end a test decides: each has a lifetime context, keyed
// by the name a client presents (connection_init's "who", an SSE request's Authorization).
type credentials struct {
	mu    sync.Mutex
	lives map[string]context.Context
	ends  map[string]context.CancelCauseFunc
}

type whoKey struct{}

func newCredentials(names ...string) *credentials {
	c := &credentials{lives: map[string]context.Context{}, ends: map[string]context.CancelCauseFunc{}}
	for _, n := range names {
		c.lives[n], c.ends[n] = context.WithCancelCause(context.Background())
	}
	return c
}

// end ends name's credential with code, as access does at a JWT's exp.
func (c *credentials) end(name, code string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ends[name](&gqlerror.Error{Message: "the token ended", Extensions: map[string]any{"code": code}})
}

func (c *credentials) lifetime(ctx context.Context) (context.Context, context.CancelFunc) {
	who, _ := ctx.Value(whoKey{}).(string)
	c.mu.Lock()
	life := c.lives[who]
	c.mu.Unlock()
	if life == nil {
		return nil, nil
	}
	derived, cancel := context.WithCancel(life)
	return derived, cancel
}

func (c *credentials) init(ctx context.Context, payload map[string]any) (context.Context, *map[string]any, error) {
	who, _ := payload["who"].(string)
	return context.WithValue(ctx, whoKey{}, who), nil, nil
}

// A websocket ends with its credential: 4403 with the code as the reason (the legacy protocol
// sends connection_error first); its operation is cancelled; another connection runs on.
func TestWebsocketEndsWithItsCredential(t *testing.T) {
	for _, protocol := range []string{SubprotocolTransportWS, SubprotocolLegacyWS} {
		t.Run(protocol, func(t *testing.T) {
			creds := newCredentials("alice", "bob")
			hooks, url := newStreamServer(t, Websocket{InitFunc: creds.init, Lifetime: creds.lifetime})
			alice, bob := dial(t, url, protocol), dial(t, url, SubprotocolTransportWS)
			initAs := func(c *client, who string, legacy bool) {
				c.send(map[string]any{"type": "connection_init", "payload": map[string]any{"who": who}})
				c.expect("connection_ack", "")
				if legacy {
					c.expect("ka", "")
				}
			}
			legacy := protocol == SubprotocolLegacyWS
			initAs(alice, "alice", legacy)
			initAs(bob, "bob", false)
			start := "subscribe"
			if legacy {
				start = "start"
			}
			alice.send(map[string]any{"id": "1", "type": start, "payload": map[string]any{"query": "subscription { held }"}})
			<-hooks.started
			bob.subscribe("1", "subscription { held }")
			<-hooks.started

			creds.end("alice", "TOKEN_EXPIRED")
			if legacy {
				m := alice.expect("connection_error", "")
				if !strings.Contains(string(m.Payload), `"TOKEN_EXPIRED"`) {
					t.Fatalf("connection_error = %s", m.Payload)
				}
			}
			alice.expectClose(CloseForbidden, "TOKEN_EXPIRED")
			<-hooks.cancelled
			bob.expectQuiet()
			if hooks.Running() != 1 {
				t.Fatalf("running = %d, want bob's subscription only", hooks.Running())
			}
		})
	}
}

// An SSE stream (distinct connections) ends with its credential: a last `next` carrying the
// error, then `complete`.
func TestSSEEndsWithItsCredential(t *testing.T) {
	creds := newCredentials("alice")
	hooks := newStreamHooks()
	srv := streamHandler(streamSchema(hooks))
	srv.AddTransport(SSE{Lifetime: func(ctx context.Context) (context.Context, context.CancelFunc) {
		return creds.lifetime(context.WithValue(ctx, whoKey{}, "alice"))
	}})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	_, events := openStream(t, context.Background(), "POST", hs.URL, `{"query":"subscription { held }"}`)
	<-hooks.started
	creds.end("alice", "TOKEN_REVOKED")
	if ev := nextEvent(t, events); ev.name != "next" || !strings.Contains(ev.data, `"code":"TOKEN_REVOKED"`) {
		t.Fatalf("event = %+v", ev)
	}
	if ev := nextEvent(t, events); ev.name != "complete" {
		t.Fatalf("event = %+v", ev)
	}
	<-hooks.cancelled
}

// A single-connection stream ends with the credential of its GET: each operation gets a last
// `next` with the error and its `complete`.
func TestSSESingleEndsWithItsCredential(t *testing.T) {
	creds := newCredentials("alice")
	hooks := newStreamHooks()
	srv := streamHandler(streamSchema(hooks))
	srv.AddTransport(SSE{Single: &Reservations{}, Lifetime: func(ctx context.Context) (context.Context, context.CancelFunc) {
		return creds.lifetime(context.WithValue(ctx, whoKey{}, "alice"))
	}})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	token := reserve(t, hs.URL, "")
	_, events := openReserved(t, context.Background(), hs.URL, "", token)
	startOp(t, hs.URL, "", token, "op-1", "subscription { held }")
	<-hooks.started
	creds.end("alice", "TOKEN_EXPIRED")
	ev := nextSingle(t, events)
	if ev.name != "next" || ev.ID != "op-1" || !strings.Contains(string(ev.Payload), `"code":"TOKEN_EXPIRED"`) {
		t.Fatalf("event = %+v %s", ev, ev.Payload)
	}
	if ev := nextSingle(t, events); ev.name != "complete" || ev.ID != "op-1" {
		t.Fatalf("event = %+v", ev)
	}
	<-hooks.cancelled
}
