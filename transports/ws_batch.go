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
// and its control frames (ping, close) through Write; the connection's writer writes data
// messages, and the pongs that answer a client's pings, with writeText, which frames every queued
// message into one buffer and writes it with one system call. With thousands of subscribers, a message per system call and gorilla's
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
	// frameBudget is how long gorilla gave the frame it writes next (nanoseconds; 0: no
	// deadline): it sets a deadline before each control frame and around the handshake. The
	// deadline is put on the socket when that frame is written, with mu held, and counted from
	// then, so it bounds that frame alone: put on the socket at once, a control frame's short
	// deadline cut the batch in progress to a slow but reading client; counted from when gorilla
	// set it, the wait for that batch could use it up, and a frame written with a deadline already
	// past fails, after which gorilla refuses every later frame, the close frame included.
	frameBudget atomic.Int64
}

// SetWriteDeadline sets the budget of gorilla's next frame (frameBudget).
func (b *batchConn) SetWriteDeadline(t time.Time) error {
	b.frameBudget.Store(budgetUntil(t))
	return nil
}

// SetDeadline sets the read deadline and the budget of gorilla's next frame.
func (b *batchConn) SetDeadline(t time.Time) error {
	b.frameBudget.Store(budgetUntil(t))
	return b.Conn.SetReadDeadline(t)
}

// budgetUntil is the time left until t, at least a nanosecond; 0 for the zero time (none).
func budgetUntil(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(int64(time.Until(t)), 1)
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

// Write writes p (one of gorilla's frames) through within the budget gorilla set for it, unless
// an earlier write broke the stream.
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.broken {
		return 0, fmt.Errorf("websocket frame after a failed write: %w", net.ErrClosed)
	}
	var deadline int64
	if budget := b.frameBudget.Load(); budget > 0 {
		deadline = time.Now().UnixNano() + budget
	}
	b.setSocketDeadline(deadline)
	n, err := b.Conn.Write(p)
	if err != nil && n > 0 {
		b.broken = true
	}
	return n, err
}

// writeText writes a pong frame with pong's payload when pong is not nil, then messages as text
// frames, in order, in as few writes as maxBatchBytes allows. open is asked with the lock held: once it says no (a close frame may have been written), no
// data frame may follow, and nothing is written.
func (b *batchConn) writeText(pong *string, messages [][]byte, open func() bool, now time.Time, timeout time.Duration) error {
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
	if pong != nil {
		*buf = appendFrame(*buf, opPong, []byte(*pong))
		if len(messages) == 0 {
			if _, err := b.Conn.Write(*buf); err != nil {
				b.broken = true
				return fmt.Errorf("write a pong: %w", err)
			}
			return nil
		}
	}
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

// Opcodes of the frames the writer writes (RFC 6455 section 5.2).
const (
	opText = 0x1
	opPong = 0xA // a control frame: its payload is at most 125 bytes, as a ping's is
)

// appendTextFrame appends payload as one final, unmasked text frame (a server never masks).
func appendTextFrame(dst, payload []byte) []byte { return appendFrame(dst, opText, payload) }

// appendFrame appends payload as one final, unmasked frame of opcode op.
func appendFrame(dst []byte, op byte, payload []byte) []byte {
	fin := 0x80 | op
	switch n := len(payload); {
	case n <= 125:
		dst = append(dst, fin, byte(n))
	case n <= 0xFFFF:
		dst = append(dst, fin, 126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	default:
		dst = append(dst, fin, 127)
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
	if u, ok := nc.(hijackUnwrapper); ok {
		nc = u.UnwrapHijacked()
	}
	w.conn = &batchConn{Conn: nc, socketDeadline: -1}
	return w.conn, rw, nil
}

// hijackUnwrapper is a connection wrapper that has no part in a hijacked connection's traffic,
// as access.CodeNetHTTPErrors's, which rewrites only the answers net/http gives before any
// handler runs: the websocket reads and writes the connection under it. A wrapper's frame more in
// every reader parked in a read took the runtime's average stack past what fits its 4 KiB
// starting stacks (see conn.serve): 2.3 KiB more per connection at 2,000 subscribers.
type hijackUnwrapper interface{ UnwrapHijacked() net.Conn }
