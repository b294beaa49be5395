package transports

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// maxBatchBytes bounds the bytes one batch holds before they are written out; a burst larger
// than this costs one write per maxBatchBytes instead of one per message.
const maxBatchBytes = 64 << 10

// batchBuffers holds the buffers of batches being written; an idle connection holds none.
var batchBuffers = sync.Pool{New: func() any { return new([]byte) }}

// batchConn is the hijacked network connection under a websocket. gorilla writes its handshake
// and control frames (ping, pong, close) through Write; the connection's writer writes data
// messages with writeText, which frames every queued message into one buffer and writes it with
// one system call. With thousands of subscribers, a message per system call and gorilla's
// per-message writer were over a third of a fan-out's CPU. mu serialises both paths, so frames
// never interleave.
type batchConn struct {
	net.Conn
	mu sync.Mutex
	// broken is set when a batch or a frame failed part-way: no frame may follow it, or the
	// peer would read the rest of the broken frame from it.
	broken bool
	// socketDeadline is the write deadline on the socket (Unix nanoseconds; 0: none; -1: not
	// known, as after the hijack), so the writer knows when it must renew it. Only written with mu
	// held, right before the write it is for.
	socketDeadline int64
	// frameDeadline is the deadline gorilla set for the frame it writes next (before each control
	// frame, around the handshake). It reaches the socket only when that frame is written, with mu
	// held, so it bounds that frame alone: put on the socket at once, the one-second deadline of
	// gorilla's answer to a client's ping cut the batch being written to a slow but reading client.
	frameDeadline atomic.Int64
}

// SetWriteDeadline sets the deadline of gorilla's next frame (frameDeadline).
func (b *batchConn) SetWriteDeadline(t time.Time) error {
	b.frameDeadline.Store(unixNanos(t))
	return nil
}

// SetDeadline sets the read deadline and the deadline of gorilla's next frame.
func (b *batchConn) SetDeadline(t time.Time) error {
	b.frameDeadline.Store(unixNanos(t))
	return b.Conn.SetReadDeadline(t)
}

func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// setSocketDeadline puts deadline d (Unix nanoseconds, 0: none) on the socket. mu is held.
func (b *batchConn) setSocketDeadline(d int64) {
	if d == b.socketDeadline {
		return
	}
	b.socketDeadline = d
	var t time.Time
	if d != 0 {
		t = time.Unix(0, d)
	}
	_ = b.Conn.SetWriteDeadline(t)
}

// ensureWriteDeadline makes sure a write starting at now has at least timeout before the
// socket's write deadline. Setting a deadline costs a runtime timer update per call, once per
// message per subscriber in a fan-out; so a renewed deadline is set timeout plus a quarter of it
// ahead, and a write finds it far enough for the next quarter of timeout. A write is then cut
// after at least timeout and at most 1.25 × timeout. mu is held.
func (b *batchConn) ensureWriteDeadline(now time.Time, timeout time.Duration) {
	if d := b.socketDeadline; d > 0 && d-now.UnixNano() >= int64(timeout) {
		return
	}
	b.setSocketDeadline(now.Add(timeout + timeout/4).UnixNano())
}

// Write writes p (one of gorilla's frames) through with the deadline gorilla set for it, unless
// an earlier write broke the stream.
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.broken {
		return 0, fmt.Errorf("websocket frame after a failed write: %w", net.ErrClosed)
	}
	b.setSocketDeadline(b.frameDeadline.Load())
	n, err := b.Conn.Write(p)
	if err != nil && n > 0 {
		b.broken = true
	}
	return n, err
}

// writeText writes messages as text frames, in order, in as few writes as maxBatchBytes allows.
// open is asked with the lock held: once it says no (a close frame may have been written), no
// data frame may follow, and nothing is written.
func (b *batchConn) writeText(messages [][]byte, open func() bool, now time.Time, timeout time.Duration) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !open() {
		return nil
	}
	if b.broken {
		return fmt.Errorf("websocket messages after a failed write: %w", net.ErrClosed)
	}
	b.ensureWriteDeadline(now, timeout)
	buf := batchBuffers.Get().(*[]byte)
	defer func() {
		*buf = (*buf)[:0]
		batchBuffers.Put(buf)
	}()
	for i, m := range messages {
		*buf = appendTextFrame(*buf, m)
		if len(*buf) >= maxBatchBytes || i == len(messages)-1 {
			if _, err := b.Conn.Write(*buf); err != nil {
				b.broken = true
				return fmt.Errorf("write %d websocket messages: %w", len(messages), err)
			}
			*buf = (*buf)[:0]
		}
	}
	return nil
}

// appendTextFrame appends payload as one final, unmasked text frame (RFC 6455 section 5.2; a
// server never masks).
func appendTextFrame(dst, payload []byte) []byte {
	const finText = 0x80 | 0x1
	switch n := len(payload); {
	case n <= 125:
		dst = append(dst, finText, byte(n))
	case n <= 0xFFFF:
		dst = append(dst, finText, 126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	default:
		dst = append(dst, finText, 127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	return append(dst, payload...)
}

// batchingWriter hands gorilla's Upgrader a batchConn in place of the hijacked connection.
type batchingWriter struct {
	http.ResponseWriter
	conn *batchConn
}

// Hijack takes over the connection and wraps it.
func (w *batchingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hijacker, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("response writer %T cannot be hijacked", w.ResponseWriter)
	}
	nc, rw, err := hijacker.Hijack()
	if err != nil {
		return nil, nil, fmt.Errorf("hijack: %w", err)
	}
	w.conn = &batchConn{Conn: nc, socketDeadline: -1}
	return w.conn, rw, nil
}
