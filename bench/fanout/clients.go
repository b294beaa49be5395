package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

const eventsQuery = `subscription($ws: ID!) { workspaceEvents(workspaceId: $ws) { cursor kind occurredAt sessionId turnId } }`

// subscriber is one graphql-transport-ws client following workspaceEvents.
type subscriber struct {
	conn     *websocket.Conn
	events   atomic.Int64
	sawMark  atomic.Value // string: the last marker session id seen
	instance int          // index of the server it is connected to
}

// fleet is every subscriber plus the shared measurements.
type fleet struct {
	subs        []*subscriber
	connectWall time.Duration
	handshakes  *histogram
	latency     *histogram
	perInstance []*histogram // delivery latency by the server a subscriber is connected to
	wg          sync.WaitGroup
	readErrors  atomic.Int64
}

// connectFleet dials n subscribers with `dialers` handshakes in flight at once, subscriber i to
// urls[i mod len(urls)].
func connectFleet(ctx context.Context, urls []string, ws string, n, dialers int) (*fleet, error) {
	f := &fleet{subs: make([]*subscriber, n), handshakes: newHistogram(), latency: newHistogram(),
		perInstance: make([]*histogram, len(urls))}
	for i := range f.perInstance {
		f.perInstance[i] = newHistogram()
	}
	start := time.Now()
	jobs := make(chan int)
	errs := make(chan error, dialers)
	var dialWG sync.WaitGroup
	for w := 0; w < dialers; w++ {
		dialWG.Add(1)
		go func() {
			defer dialWG.Done()
			for i := range jobs {
				s, err := f.dial(ctx, urls[i%len(urls)], i%len(urls), ws, fmt.Sprint(i))
				if err != nil {
					errs <- fmt.Errorf("subscriber %d: %w", i, err)
					return
				}
				f.subs[i] = s
			}
		}()
	}
	var failed error
feed:
	for i := 0; i < n; i++ {
		select {
		case jobs <- i:
		case failed = <-errs:
			break feed
		}
	}
	close(jobs)
	dialWG.Wait()
	if failed == nil && len(errs) > 0 {
		failed = <-errs
	}
	f.connectWall = time.Since(start)
	if failed != nil {
		f.close()
		return nil, failed
	}
	return f, nil
}

func (f *fleet) dial(ctx context.Context, url string, instance int, ws, id string) (*subscriber, error) {
	began := time.Now()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, ReadBufferSize: 512, WriteBufferSize: 512,
		HandshakeTimeout: 30 * time.Second}
	conn, _, err := d.DialContext(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if err := conn.WriteJSON(map[string]any{"type": "connection_init"}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("init: %w", err)
	}
	var ack struct{ Type string }
	if err := conn.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
		conn.Close()
		return nil, fmt.Errorf("no connection_ack (%q): %v", ack.Type, err)
	}
	sub := map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{
		"query": eventsQuery, "variables": map[string]any{"ws": ws}}}
	if err := conn.WriteJSON(sub); err != nil {
		conn.Close()
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	f.handshakes.add(time.Since(began))
	s := &subscriber{conn: conn, instance: instance}
	s.sawMark.Store("")
	f.wg.Add(1)
	go f.read(s)
	return s, nil
}

var occurredKey = []byte(`"occurredAt":"`)

// read counts events and records each one's delivery latency (now - occurredAt).
func (f *fleet) read(s *subscriber) {
	defer f.wg.Done()
	for {
		_, data, err := s.conn.ReadMessage()
		if err != nil {
			if !websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway) {
				f.readErrors.Add(1)
			}
			return
		}
		now := time.Now()
		i := bytes.Index(data, occurredKey)
		if i < 0 {
			continue // complete, error or pong
		}
		rest := data[i+len(occurredKey):]
		if j := bytes.IndexByte(rest, '"'); j > 0 {
			if at, err := time.Parse(time.RFC3339Nano, string(rest[:j])); err == nil {
				f.latency.add(now.Sub(at))
				f.perInstance[s.instance].add(now.Sub(at))
			}
		}
		s.events.Add(1)
		if k := bytes.Index(data, []byte(`"sessionId":"mark-`)); k >= 0 {
			var ev struct {
				Payload struct {
					Data struct {
						WorkspaceEvents struct{ SessionID string }
					}
				}
			}
			if json.Unmarshal(data, &ev) == nil {
				s.sawMark.Store(ev.Payload.Data.WorkspaceEvents.SessionID)
			}
		}
	}
}

// awaitMark waits until every subscriber has seen the marker session's event.
func (f *fleet) awaitMark(ctx context.Context, mark string, within time.Duration) int {
	return awaitMarks(ctx, f.subs, func(s *subscriber) *atomic.Value { return &s.sawMark }, mark, within)
}

// awaitMarks waits until the last marker every subscriber saw (lastMark) is mark, or within has
// passed, and returns how many saw it: both fleets, forkgraph's and the A/B mode's, wait so.
func awaitMarks[S any](ctx context.Context, subs []S, lastMark func(S) *atomic.Value, mark string, within time.Duration) int {
	deadline := time.Now().Add(within)
	for {
		seen := 0
		for _, s := range subs {
			if lastMark(s).Load().(string) == mark {
				seen++
			}
		}
		if seen == len(subs) || time.Now().After(deadline) || ctx.Err() != nil {
			return seen
		}
		sleep(ctx, 50)
	}
}

// awaitLive reports marker sessions until every subscriber has received one, proving that all
// subscriptions are registered on the server before anything is measured.
func (f *fleet) awaitLive(ctx context.Context, api *apiClient, ws string) error {
	for attempt := 0; attempt < 30; attempt++ {
		mark := fmt.Sprintf("mark-live-%d", attempt)
		if err := api.reportSession(ctx, ws, mark); err != nil {
			return err
		}
		if f.awaitMark(ctx, mark, 5*time.Second) == len(f.subs) {
			return nil
		}
	}
	return fmt.Errorf("not every subscriber received events after 30 attempts")
}

func (f *fleet) resetSamples() {
	f.latency = newHistogram()
	for i := range f.perInstance {
		f.perInstance[i] = newHistogram()
	}
	for _, s := range f.subs {
		s.events.Store(0)
	}
}

// awaitDelivery waits for the final marker; it returns how many subscribers saw it.
func (f *fleet) awaitDelivery(ctx context.Context, within time.Duration) int {
	return f.awaitMark(ctx, "mark-end", within)
}

func (f *fleet) close() {
	for _, s := range f.subs {
		if s != nil {
			_ = s.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(1000, ""), time.Now().Add(time.Second))
			_ = s.conn.Close()
		}
	}
	f.wg.Wait()
}
