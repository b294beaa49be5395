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

// SetWriteDeadline accepts every deadline.
func (r *recordingConn) SetWriteDeadline(time.Time) error { return nil }

func alwaysOpen() bool { return true }

func TestBatchConnWritesQueuedMessagesInOneWrite(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}
	require.NoError(t, b.writeText(nil, [][]byte{[]byte("one"), []byte("two")}, alwaysOpen, time.Now(), time.Minute))
	require.Len(t, rec.writes, 1)
	require.Equal(t, []byte("\x81\x03one\x81\x03two"), rec.writes[0])
}

func TestBatchConnWritesNothingOnceClosing(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}
	require.NoError(t, b.writeText(nil, [][]byte{[]byte("late")}, func() bool { return false }, time.Now(), time.Minute))
	require.Empty(t, rec.writes, "no data frame may follow a close frame")
}

func TestBatchConnSplitsALargeBatch(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}
	big := bytes.Repeat([]byte("x"), maxBatchBytes)
	require.NoError(t, b.writeText(nil, [][]byte{big, []byte("tail")}, alwaysOpen, time.Now(), time.Minute))
	require.Len(t, rec.writes, 2, "a batch at the bound is written before it grows further")
	require.Equal(t, []byte("\x81\x04tail"), rec.writes[1])
}

func TestBatchConnReportsTheWriteError(t *testing.T) {
	broken := errors.New("connection reset")
	b := &batchConn{Conn: &recordingConn{fail: broken}}
	require.ErrorIs(t, b.writeText(nil, [][]byte{[]byte("frame")}, alwaysOpen, time.Now(), time.Minute), broken)
}

// A failed write may have sent half a frame: no frame may follow it, not even a close frame,
// or the peer would read it as the rest of the broken one.
func TestBatchConnWritesNothingAfterAFailedWrite(t *testing.T) {
	rec := &recordingConn{fail: errors.New("i/o timeout")}
	b := &batchConn{Conn: rec}
	require.Error(t, b.writeText(nil, [][]byte{[]byte("frame")}, alwaysOpen, time.Now(), time.Minute))
	rec.fail = nil
	_, err := b.Write([]byte("\x88\x02\x03\xf5"))
	require.ErrorIs(t, err, net.ErrClosed)
	require.ErrorIs(t, b.writeText(nil, [][]byte{[]byte("next")}, alwaysOpen, time.Now(), time.Minute), net.ErrClosed)
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
		_ = batching.conn.writeText(nil, messages, alwaysOpen, time.Now(), time.Minute)
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

// deadlineConn records the write deadlines set on the socket and the writes.
type deadlineConn struct {
	recordingConn
	deadlines []time.Time
}

func (d *deadlineConn) SetWriteDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}

func TestWriteDeadlineIsRenewedOnlyWhenAWriteWouldHaveLessThanTheTimeout(t *testing.T) {
	const timeout = 8 * time.Second
	rec := &deadlineConn{}
	b := &batchConn{Conn: rec, socketDeadline: -1}
	start := time.Unix(1000, 0)
	write := func(at time.Time) {
		require.NoError(t, b.writeText(nil, [][]byte{[]byte("m")}, alwaysOpen, at, timeout))
	}

	write(start)
	require.Equal(t, []time.Time{start.Add(10 * time.Second)}, rec.deadlines, "the first write sets timeout + timeout/4")

	// Writes within the next quarter of the timeout still have at least the timeout.
	write(start.Add(time.Second))
	write(start.Add(2 * time.Second))
	require.Len(t, rec.deadlines, 1)

	// Past it, the deadline would be less than the timeout away: renewed.
	write(start.Add(2*time.Second + time.Millisecond))
	require.Len(t, rec.deadlines, 2)
	require.Equal(t, start.Add(12*time.Second+time.Millisecond), rec.deadlines[1])
}

// gorilla sets a deadline before each control frame it writes. It bounds that frame alone: it
// reaches the socket when the frame is written, not before, so it cannot cut a batch in progress;
// it counts from then, so a wait for that batch does not use it up; and the next batch renews
// the deadline it left.
func TestAControlFrameDeadlineBoundsThatFrameAlone(t *testing.T) {
	t.Parallel() // its waits are the peer's pace: let them overlap the others'
	const timeout = 8 * time.Second
	rec := &deadlineConn{}
	b := &batchConn{Conn: rec, socketDeadline: -1}
	require.NoError(t, b.writeText(nil, [][]byte{[]byte("m")}, alwaysOpen, time.Now(), timeout))
	require.Len(t, rec.deadlines, 1)

	require.NoError(t, b.SetWriteDeadline(time.Now().Add(time.Second)))
	require.Len(t, rec.deadlines, 1, "nothing reaches the socket before the frame is written")
	time.Sleep(300 * time.Millisecond) // waiting for a batch, say
	before := time.Now()
	_, err := b.Write([]byte("\x89\x00"))
	require.NoError(t, err)
	require.WithinRange(t, rec.deadlines[1], before.Add(time.Second-time.Millisecond), time.Now().Add(time.Second),
		"the frame has its whole second from when it is written")

	now := time.Now()
	require.NoError(t, b.writeText(nil, [][]byte{[]byte("m")}, alwaysOpen, now, timeout))
	require.True(t, now.Add(10*time.Second).Equal(rec.deadlines[2]), "the next batch has its timeout again: %v", rec.deadlines[2])

	// gorilla clears a deadline with the zero time: the frame after it is written without one.
	require.NoError(t, b.SetWriteDeadline(time.Time{}))
	_, err = b.Write([]byte("\x89\x00"))
	require.NoError(t, err)
	require.Equal(t, time.Time{}, rec.deadlines[3])
}

// The writer writes the pong that answers a client's ping ahead of its batch, in the same write,
// or alone; never after the close frame.
func TestBatchConnWritesAPongAheadOfTheBatch(t *testing.T) {
	rec := &recordingConn{}
	b := &batchConn{Conn: rec}
	pong := "hi"
	require.NoError(t, b.writeText(&pong, [][]byte{[]byte("one")}, alwaysOpen, time.Now(), time.Minute))
	require.NoError(t, b.writeText(&pong, nil, alwaysOpen, time.Now(), time.Minute))
	require.NoError(t, b.writeText(&pong, nil, func() bool { return false }, time.Now(), time.Minute))
	require.Equal(t, [][]byte{[]byte("\x8a\x02hi\x81\x03one"), []byte("\x8a\x02hi")}, rec.writes)
}
