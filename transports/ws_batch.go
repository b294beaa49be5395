package transports

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// maxBatchBytes bounds the bytes one batch holds before they are written out; a burst larger
// than this costs one write per maxBatchBytes instead of one per message.
const maxBatchBytes = 64 << 10

// batchBuffers holds the buffers of open batches; an idle connection holds none.
var batchBuffers = sync.Pool{New: func() any { return new([]byte) }}

// batchConn is the hijacked network connection under a websocket. Outside a batch it writes
// through. Inside one (the writer goroutine draining several queued messages) gorilla's frames,
// and any control frame written meanwhile, are gathered and written with one system call when
// the batch ends: with thousands of subscribers a burst of events otherwise costs one write
// system call per message per connection, the largest single item of a fan-out's CPU.
type batchConn struct {
	net.Conn
	mu       sync.Mutex
	batching bool
	buf      *[]byte
}

// Write gathers p while a batch is open, else writes it through.
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.batching {
		return b.Conn.Write(p)
	}
	if b.buf == nil {
		b.buf = batchBuffers.Get().(*[]byte)
	}
	*b.buf = append(*b.buf, p...)
	if len(*b.buf) >= maxBatchBytes {
		if err := b.writeOutLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// begin opens a batch.
func (b *batchConn) begin() {
	b.mu.Lock()
	b.batching = true
	b.mu.Unlock()
}

// end closes the batch and writes what it gathered; the error is the write's.
func (b *batchConn) end() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batching = false
	err := b.writeOutLocked()
	if b.buf != nil {
		batchBuffers.Put(b.buf)
		b.buf = nil
	}
	return err
}

func (b *batchConn) writeOutLocked() error {
	if b.buf == nil || len(*b.buf) == 0 {
		return nil
	}
	_, err := b.Conn.Write(*b.buf)
	*b.buf = (*b.buf)[:0]
	if err != nil {
		return fmt.Errorf("write batched frames: %w", err)
	}
	return nil
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
	w.conn = &batchConn{Conn: nc}
	return w.conn, rw, nil
}
