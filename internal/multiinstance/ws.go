package multiinstance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Message is one server message of a graphql-transport-ws subscription: "next" (Payload is the
// execution result) or "complete". An "error" message ends the stream: Next returns it as a
// *ResponseError wrapped in ErrStreamEnded.
type Message struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// ErrStreamEnded is returned by Stream.Next once the stream has completed, failed or lost its
// connection; Stream.End says how.
var ErrStreamEnded = errors.New("subscription stream ended")

// Stream is one subscription on a connection of its own. Messages are queued without bound as
// they arrive, so a slow test never makes the server see a slow client.
type Stream struct {
	conn *websocket.Conn

	mu     sync.Mutex
	queue  []Message
	end    error // why the stream ended: nil while it runs
	notify chan struct{}
	closed sync.Once
}

// Subscribe dials wsURL with graphql-transport-ws, initialises the connection and subscribes to
// query with vars. It returns once the server has acknowledged the connection and the subscribe
// message is written.
func Subscribe(ctx context.Context, wsURL, query string, vars map[string]any) (*Stream, error) {
	dialer := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
	conn, resp, err := dialer.DialContext(ctx, wsURL, nil)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", wsURL, err)
	}
	resp.Body.Close()
	s := &Stream{conn: conn, notify: make(chan struct{}, 1)}
	_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if err := conn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{}}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("connection_init: %w", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var ack Message
	if err := conn.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
		conn.Close()
		return nil, fmt.Errorf("want connection_ack, got %+v (%v)", ack, err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	if err := conn.WriteJSON(map[string]any{"type": "subscribe", "id": "1",
		"payload": map[string]any{"query": query, "variables": vars}}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	go s.read()
	return s, nil
}

func (s *Stream) read() {
	for {
		var m Message
		if err := s.conn.ReadJSON(&m); err != nil {
			s.finish(fmt.Errorf("connection lost: %w", err))
			return
		}
		switch m.Type {
		case "next":
			s.push(m)
		case "error": // the end of the stream: Next returns it, wrapped in ErrStreamEnded
			var errs []GraphQLError
			if err := json.Unmarshal(m.Payload, &errs); err != nil || len(errs) == 0 {
				errs = []GraphQLError{{Message: "undecodable error message: " + string(m.Payload)}}
			}
			s.finish(&ResponseError{Errors: errs})
			return
		case "complete":
			s.push(m)
			s.finish(nil)
			return
		case "ping":
			_ = s.conn.WriteJSON(map[string]any{"type": "pong"})
		}
	}
}

func (s *Stream) push(m Message) {
	s.mu.Lock()
	s.queue = append(s.queue, m)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// finish records why the stream ended (nil: it completed) and closes the connection.
func (s *Stream) finish(why error) {
	s.closed.Do(func() {
		s.mu.Lock()
		if why == nil {
			why = errors.New("completed")
		}
		s.end = why
		s.mu.Unlock()
		s.conn.Close()
		select {
		case s.notify <- struct{}{}:
		default:
		}
	})
}

// Next returns the next message, waiting at most limit. Once every queued message has been
// returned and the stream has ended, it returns ErrStreamEnded.
func (s *Stream) Next(ctx context.Context, limit time.Duration) (Message, error) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			m := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return m, nil
		}
		end := s.end
		s.mu.Unlock()
		if end != nil {
			return Message{}, fmt.Errorf("%w: %w", ErrStreamEnded, end)
		}
		select {
		case <-s.notify:
		case <-timer.C:
			return Message{}, fmt.Errorf("no message within %s", limit)
		case <-ctx.Done():
			return Message{}, ctx.Err()
		}
	}
}

// End is why the stream ended, or nil while it runs.
func (s *Stream) End() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.end
}

// Close ends the subscription from the client side.
func (s *Stream) Close() {
	s.mu.Lock()
	running := s.end == nil
	s.mu.Unlock()
	if running {
		_ = s.conn.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	}
	s.finish(errors.New("closed by the client"))
}

// Decode unmarshals a next message's data into out; a payload with errors is a *ResponseError.
func (m Message) Decode(out any) error {
	if m.Type != "next" {
		return fmt.Errorf("message %s %s is not next", m.Type, m.Payload)
	}
	var result struct {
		Data   json.RawMessage `json:"data"`
		Errors []GraphQLError  `json:"errors"`
	}
	if err := json.Unmarshal(m.Payload, &result); err != nil {
		return fmt.Errorf("decode payload %s: %w", m.Payload, err)
	}
	if len(result.Errors) > 0 {
		return &ResponseError{Errors: result.Errors}
	}
	return json.Unmarshal(result.Data, out)
}
