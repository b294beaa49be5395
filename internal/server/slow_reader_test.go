package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// healthyWindow is how many events TestSlowReaderCostsOnlyItself reports ahead of what its
// healthy subscriber has read.
const healthyWindow = 100

// slowReaderEvents is the workspaceEvents selection of TestSlowReaderCostsOnlyItself, the same
// for every subscriber so that they share its execution (resolvers' shared streams).
const slowReaderEvents = `subscription($ws: ID!) { workspaceEvents(workspaceId: $ws) { cursor kind session { id title } } }`

// wsMessage is one graphql-transport-ws message as the test clients read it.
type wsMessage struct {
	ID, Type string
	Payload  json.RawMessage
}

// dialTransportWS opens an acknowledged graphql-transport-ws connection with dialer d.
func dialTransportWS(t *testing.T, base string, d *websocket.Dialer) *websocket.Conn {
	t.Helper()
	d.Subprotocols = []string{"graphql-transport-ws"}
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/graphql", nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	t.Cleanup(func() { _ = conn.Close() })
	require.NoError(t, conn.WriteJSON(map[string]any{"type": "connection_init"}))
	require.Equal(t, "connection_ack", readWS(t, conn).Type)
	return conn
}

// readWS reads one message, failing the test after 10 s (the server has every reason to send it
// at once).
func readWS(t *testing.T, conn *websocket.Conn) wsMessage {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	var m wsMessage
	require.NoError(t, conn.ReadJSON(&m))
	return m
}

// subscribeLiveEvents starts the live workspaceEvents subscription id on conn.
func subscribeLiveEvents(t *testing.T, conn *websocket.Conn, id, ws string) {
	t.Helper()
	require.NoError(t, conn.WriteJSON(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{
		"query": slowReaderEvents, "variables": map[string]any{"ws": ws},
	}}))
}

// eventTitle is the session title of a workspaceEvents result (its errors fail the test).
func eventTitle(t *testing.T, m wsMessage) string {
	t.Helper()
	require.Equal(t, "next", m.Type, "payload: %s", m.Payload)
	var p struct {
		Data struct {
			WorkspaceEvents struct {
				Session struct{ Title string }
			}
		}
		Errors []struct {
			Message    string
			Extensions map[string]any
		}
	}
	require.NoError(t, json.Unmarshal(m.Payload, &p))
	require.Empty(t, p.Errors, "the healthy subscriber was ended: %s", m.Payload)
	return p.Data.WorkspaceEvents.Session.Title
}

// tinyReceiveBuffer is a dialer whose sockets take at most a few KiB before the sender must
// wait: the client that never reads then fills the server's queue after a few events, as a
// remote client on a slow link does, instead of after the megabytes loopback buffers hold.
func tinyReceiveBuffer() *websocket.Dialer {
	nd := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); err != nil {
			return err
		}
		return serr
	}}
	return &websocket.Dialer{NetDialContext: nd.DialContext, ReadBufferSize: 1024}
}

// reportTitles reports sessions s-0 … s-(n-1) of ws, each with a title of about size bytes,
// from four clients at once, each report taking a slot of window first (or giving up when stop
// is closed); it returns the first error once every report is answered.
func reportTitles(base, ws string, n, size int, window chan struct{}, stop <-chan struct{}) error {
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range work {
				select {
				case window <- struct{}{}:
				case <-stop:
					return
				}
				errs <- reportSessionTitle(base, ws, fmt.Sprintf("s-%d", i), sessionTitle(i, size))
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

// sessionTitle is the title reportTitles gives session i.
func sessionTitle(i, size int) string {
	return fmt.Sprintf("session %03d ", i) + strings.Repeat("x", size)
}

// reportMarkers renames a session "marker <n>" every 50 ms until the returned function is
// called.
func reportMarkers(t *testing.T, base, ws string) (stop func()) {
	t.Helper()
	done, stopped := make(chan struct{}), make(chan error, 1)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			if err := reportSessionTitle(base, ws, "marker", fmt.Sprintf("marker %d", i)); err != nil {
				stopped <- err
				return
			}
			select {
			case <-done:
				stopped <- nil
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		require.NoError(t, <-stopped)
	}
}

func reportSessionTitle(base, ws, id, title string) error {
	body, _ := json.Marshal(map[string]any{
		"query": `mutation($in: ReportSessionInput!) { reportSession(input: $in) { id } }`,
		"variables": map[string]any{"in": map[string]any{
			"workspaceId": ws, "id": id, "provider": "simulated", "title": title,
		}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var envelope struct{ Errors []map[string]any }
	if err := json.NewDecoder(resp.Body).Decode(&envelope); err != nil {
		return err
	}
	if len(envelope.Errors) > 0 {
		return fmt.Errorf("reportSession %s: %v", id, envelope.Errors)
	}
	return nil
}

// TestSlowReaderCostsOnlyItself is issue 21's reproduction: a client with 20 live
// workspaceEvents subscriptions on one websocket that stops reading must not end a healthy
// subscriber's stream. The healthy one gets every one of 300 events of about 1 KB, with no
// RESUME_REQUIRED; the slow one is ended on its own (its connection closed with 1013, or its
// streams with RESUME_REQUIRED).
func TestSlowReaderCostsOnlyItself(t *testing.T) {
	// Not parallel: its few megabytes of backlog load the machine for the tests beside it.
	const ws, slowSubscriptions, events = "w-slow", 20, 300
	base, _ := startServer(t, filepath.Join(t.TempDir(), "fg.db"), "-no-seed")

	slow := dialTransportWS(t, base, tinyReceiveBuffer())
	for i := range slowSubscriptions {
		subscribeLiveEvents(t, slow, fmt.Sprintf("slow-%d", i), ws)
	}
	healthy := dialTransportWS(t, base, &websocket.Dialer{})
	subscribeLiveEvents(t, healthy, "healthy", ws)

	// Every subscription is live once it delivers a marker (they are reported until then: a
	// subscribe message is not yet a subscription); the slow client then stops reading.
	stopMarkers := reportMarkers(t, base, ws)
	for title := ""; !strings.HasPrefix(title, "marker"); {
		title = eventTitle(t, readWS(t, healthy))
	}
	live := map[string]bool{}
	for len(live) < slowSubscriptions {
		m := readWS(t, slow)
		require.True(t, strings.HasPrefix(eventTitle(t, m), "marker"))
		live[m.ID] = true
	}
	stopMarkers()

	// The reports are paced by the healthy subscriber (at most healthyWindow events it has not
	// read yet, fewer than the server's subscriber queue of 128), so that it is healthy on a
	// loaded machine too: it keeps up with the rate (four reporters at once outran even a lone
	// subscriber under the race detector). What it must not suffer is the slow client; the
	// transports tests (ws_room_test.go) show that the slow client holds nothing shared.
	window := make(chan struct{}, healthyWindow)
	want := map[string]bool{}
	for i := range events {
		want[sessionTitle(i, 1000)] = true
	}
	reported, stop := make(chan error, 1), make(chan struct{})
	defer close(stop)
	go func() { reported <- reportTitles(base, ws, events, 1000, window, stop) }()
	for len(want) > 0 {
		title := eventTitle(t, readWS(t, healthy))
		if strings.HasPrefix(title, "marker") {
			continue
		}
		require.True(t, want[title], "an event the healthy subscriber did not expect (or got twice): %.20s", title)
		delete(want, title)
		<-window
	}
	require.NoError(t, <-reported)

	// The slow client is ended by itself: reading again, it finds, after what its socket and
	// queue held, its streams ended with RESUME_REQUIRED, or its connection closed as too slow
	// when it had not read for SlowClientTimeout: with 1013, or, when it still had not read
	// within the close grace after that, dropped (1006; docs/transports.md). Each read has its
	// own deadline: on a loaded machine that backlog of a few megabytes through a 4 KiB window
	// takes a while.
	for range slowSubscriptions*(events+10) + 100 {
		require.NoError(t, slow.SetReadDeadline(time.Now().Add(10*time.Second)))
		var m wsMessage
		err := slow.ReadJSON(&m)
		var closeErr *websocket.CloseError
		if errors.As(err, &closeErr) {
			require.Contains(t, []int{websocket.CloseTryAgainLater, websocket.CloseAbnormalClosure}, closeErr.Code,
				"the slow client's close")
			return
		}
		require.NoError(t, err, "the slow client was neither closed nor told to resume")
		if m.Type == "error" {
			require.Contains(t, string(m.Payload), "RESUME_REQUIRED")
			return
		}
	}
	t.Fatal("the slow client was sent more than every event, and never told to resume")
}
