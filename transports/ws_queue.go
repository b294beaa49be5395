package transports

import (
	"errors"
	"time"

	"github.com/gorilla/websocket"
)

// send queues one encoded message, waiting while the queue is full (see waitForRoomLocked).
func (c *conn) send(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waitForRoomLocked(len(frame)) {
		c.enqueueLocked(frame)
	}
}

// hasRoomLocked reports whether a frame of size bytes fits: fewer than SendQueue messages wait
// and the bytes held (queued, and being written) stay within SendQueueBytes. A frame larger than
// SendQueueBytes fits only into an empty queue, so it waits for everything before it instead of
// waiting for ever.
func (c *conn) hasRoomLocked(size int) bool {
	if len(c.queue) >= c.cfg.SendQueue {
		return false
	}
	held := c.queuedBytes + c.writingBytes
	return held == 0 || int64(held+size) <= c.cfg.SendQueueBytes
}

// trySend queues frame only if there is room at once: a keep-alive is pointless behind a full
// queue, and the ping timer must not wait.
func (c *conn) trySend(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closing && c.hasRoomLocked(len(frame)) {
		c.enqueueLocked(frame)
	}
}

// waitForRoomLocked reports whether frame may be queued now. It is called with c.mu held and
// releases it while the queue is full: the producer waits for the writer to take the queue, but
// only as long as the writer keeps moving. When the writer's current write has been stuck for
// SlowClientTimeout, the client is not reading: its connection alone is closed with 1013, so
// no producer (an operation, the reader) ever waits longer on one slow client.
func (c *conn) waitForRoomLocked(size int) bool {
	for {
		if c.closing {
			return false
		}
		if c.hasRoomLocked(size) {
			return true
		}
		wait := time.Until(c.progressAt.Add(c.cfg.SlowClientTimeout))
		if wait <= 0 {
			c.closeTooSlowLocked()
			return false
		}
		if c.progress == nil {
			c.progress = make(chan struct{})
		}
		progress := c.progress
		c.mu.Unlock()
		timer := time.NewTimer(wait)
		select {
		case <-progress:
		case <-timer.C:
		}
		timer.Stop()
		c.mu.Lock()
	}
}

// wakeLocked wakes the producers waiting for room, in place or parked (ws_room.go): the writer
// took the queue, or the connection is closing.
func (c *conn) wakeLocked() {
	if c.progress != nil {
		close(c.progress)
		c.progress = nil
	}
	c.wakeRoomWaitersLocked()
}

// closeTooSlowLocked drops the queue, releases the waiting producers and cancels the
// operations at once, then closes with 1013 so the client reconnects and resumes. The close
// frame follows the stuck write; if that write times out instead (WriteTimeout), the network
// connection is dropped without it.
func (c *conn) closeTooSlowLocked() {
	c.closing = true
	c.takeQueueLocked()
	c.pendingClose = nil
	c.wakeLocked()
	c.writerWG.Add(1)
	go func() {
		defer c.writerWG.Done()
		c.cancelOperations()
		c.sendCloseFrame(CloseTryAgainLater, "Client too slow: no write progress; reconnect and resume")
	}()
}

// enqueueLocked appends frame, which the caller has made room for, and starts the writer.
func (c *conn) enqueueLocked(frame []byte) {
	if c.queueLocked(frame) {
		go c.flush()
	}
}

// queueLocked appends frame, which the caller has made room for, and reports whether no writer
// was running: then the caller has become it and must call flush.
func (c *conn) queueLocked(frame []byte) bool {
	c.queue = append(c.queue, frame)
	c.queuedBytes += len(frame)
	c.peakBytes = max(c.peakBytes, c.queuedBytes+c.writingBytes)
	c.cfg.Observer.queueBytes(len(frame))
	return c.becomeWriterLocked()
}

// becomeWriterLocked reports whether no writer was running; then the caller has become it and
// must run flush.
func (c *conn) becomeWriterLocked() bool {
	if c.writing {
		return false
	}
	c.writing = true
	c.progressAt = time.Now()
	c.writerWG.Add(1)
	return true
}

// flush writes queued messages until the queue is empty, then ends, sending the close frame a
// protocol close left pending. Whatever is queued when it looks is written as one batch: one
// system call for a burst instead of one per message.
func (c *conn) flush() {
	defer c.writerWG.Done()
	for {
		c.mu.Lock()
		if (len(c.queue) == 0 && c.pendingPong == nil) || (c.closing && c.pendingClose == nil) {
			c.writing = false
			c.takeQueueLocked()
			c.pendingPong = nil
			pending := c.pendingClose
			c.pendingClose = nil
			c.mu.Unlock()
			if pending != nil {
				c.sendCloseFrame(pending.code, pending.reason)
			}
			return
		}
		c.writingBytes = c.queuedBytes
		frames := c.takeQueueLocked()
		pong := c.pendingPong
		c.pendingPong = nil
		now := time.Now()
		c.progressAt = now
		c.wakeLocked()
		c.mu.Unlock()

		err := c.writeFrames(pong, frames, now)
		// The batch's bytes are free once written: producers waiting on SendQueueBytes may go on.
		c.mu.Lock()
		c.writingBytes = 0
		c.progressAt = time.Now()
		c.wakeLocked()
		c.mu.Unlock()
		if err != nil {
			if !c.isClosing() && !errors.Is(err, websocket.ErrCloseSent) {
				c.logs().error("transports: websocket write", "err", err)
			}
			c.markClosing()
			_ = c.ws.Close()
		}
	}
}

// writeFrames writes a pong (when pong is not nil) and frames as text messages in one batch,
// unless the close frame is out. The batch has at least WriteTimeout (at most 1.25 ×
// WriteTimeout) before its write is cut.
func (c *conn) writeFrames(pong *string, frames [][]byte, now time.Time) error {
	return c.out.writeText(pong, frames, func() bool { return !c.closeSent.Load() }, now, c.cfg.WriteTimeout)
}

// takeQueueLocked empties the queue and returns what it held, for the writer or to drop it.
func (c *conn) takeQueueLocked() [][]byte {
	frames := c.queue
	c.cfg.Observer.queueBytes(-c.queuedBytes)
	c.queue, c.queuedBytes = nil, 0
	return frames
}

type closeRequest struct {
	code   int
	reason string
}
