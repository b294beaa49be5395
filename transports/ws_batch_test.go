package transports

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
)

// recordingConn records each Write call, to count the system calls a batch would make.
type recordingConn struct {
	net.Conn
	writes [][]byte
	fail   error
}

func (r *recordingConn) Write(p []byte) (int, error) {
	if r.fail != nil {
		return 0, r.fail
	}
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func alwaysOpen() bool { return true }

func TestBatchConnWritesQueuedMessagesInOneWrite(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}
	require.NoError(t, b.writeText([][]byte{[]byte("one"), []byte("two")}, alwaysOpen))
	require.Len(t, rec.writes, 1)
	require.Equal(t, []byte("\x81\x03one\x81\x03two"), rec.writes[0])
}

func TestBatchConnWritesNothingOnceClosing(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}
	require.NoError(t, b.writeText([][]byte{[]byte("late")}, func() bool { return false }))
	require.Empty(t, rec.writes, "no data frame may follow a close frame")
}

func TestBatchConnSplitsALargeBatch(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}
	big := bytes.Repeat([]byte("x"), maxBatchBytes)
	require.NoError(t, b.writeText([][]byte{big, []byte("tail")}, alwaysOpen))
	require.Len(t, rec.writes, 2, "a batch at the bound is written before it grows further")
	require.Equal(t, []byte("\x81\x04tail"), rec.writes[1])
}

func TestBatchConnReportsTheWriteError(t *testing.T) {
	broken := errors.New("connection reset")
	b := &batchConn{Conn: &recordingConn{fail: broken}}
	require.ErrorIs(t, b.writeText([][]byte{[]byte("frame")}, alwaysOpen), broken)
}

// A failed write may have sent half a frame: no frame may follow it, not even a close frame,
// or the peer would read it as the rest of the broken one.
func TestBatchConnWritesNothingAfterAFailedWrite(t *testing.T) {
	rec := &recordingConn{fail: errors.New("i/o timeout")}
	b := &batchConn{Conn: rec}
	require.Error(t, b.writeText([][]byte{[]byte("frame")}, alwaysOpen))
	rec.fail = nil
	_, err := b.Write([]byte("\x88\x02\x03\xf5"))
	require.ErrorIs(t, err, net.ErrClosed)
	require.ErrorIs(t, b.writeText([][]byte{[]byte("next")}, alwaysOpen), net.ErrClosed)
	require.Empty(t, rec.writes)
}

// The frames must read back as the same messages through a websocket client, for every length
// encoding (7-bit, 16-bit, 64-bit).
func TestTextFramesReadBackThroughAWebsocketClient(t *testing.T) {
	messages := [][]byte{[]byte("short"), bytes.Repeat([]byte("m"), 126), bytes.Repeat([]byte("l"), 70000)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		batching := &batchingWriter{ResponseWriter: w}
		ws, err := (&websocket.Upgrader{}).Upgrade(batching, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		_ = batching.conn.writeText(messages, alwaysOpen)
		_, _, _ = ws.ReadMessage() // until the client goes away
	}))
	defer srv.Close()
	client, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	defer client.Close()
	for _, want := range messages {
		kind, got, err := client.ReadMessage()
		require.NoError(t, err)
		require.Equal(t, websocket.TextMessage, kind)
		require.Equal(t, want, got)
	}
}

// deadlineConn records the write deadlines set on it.
type deadlineConn struct {
	net.Conn
	deadlines []time.Time
}

func (d *deadlineConn) SetWriteDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}

func TestWriteDeadlineIsRenewedOnlyWhenAWriteWouldHaveLessThanTheTimeout(t *testing.T) {
	const timeout = 8 * time.Second
	rec := &deadlineConn{}
	b := &batchConn{Conn: rec}
	start := time.Unix(1000, 0)

	b.ensureWriteDeadline(start, timeout)
	require.Equal(t, []time.Time{start.Add(10 * time.Second)}, rec.deadlines, "the first write sets timeout + timeout/4")

	// Writes within the next quarter of the timeout still have at least the timeout.
	b.ensureWriteDeadline(start.Add(time.Second), timeout)
	b.ensureWriteDeadline(start.Add(2*time.Second), timeout)
	require.Len(t, rec.deadlines, 1)

	// Past it, the deadline would be less than the timeout away: renewed.
	b.ensureWriteDeadline(start.Add(2*time.Second+time.Millisecond), timeout)
	require.Len(t, rec.deadlines, 2)
	require.Equal(t, start.Add(12*time.Second+time.Millisecond), rec.deadlines[1])

	// A deadline set by someone else (gorilla's control frames, a close's grace) is seen: a
	// shorter one makes the next write renew it.
	require.NoError(t, b.SetWriteDeadline(start.Add(3*time.Second)))
	b.ensureWriteDeadline(start.Add(2500*time.Millisecond), timeout)
	require.Len(t, rec.deadlines, 4)
	require.Equal(t, start.Add(12500*time.Millisecond), rec.deadlines[3])

	// Cleared (zero): renewed.
	require.NoError(t, b.SetWriteDeadline(time.Time{}))
	b.ensureWriteDeadline(start.Add(3*time.Second), timeout)
	require.Len(t, rec.deadlines, 6)
}
