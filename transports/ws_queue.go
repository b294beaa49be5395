package transports

import (
	"errors"
	"log"
	"time"

	"github.com/gorilla/websocket"
)

// send queues one encoded message. It never blocks: when the queue is full the connection is
// closed with 1013, because a client this slow would otherwise hold the executor back.
func (c *conn) send(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enqueueLocked(frame)
}

func (c *conn) enqueueLocked(frame []byte) {
	if c.closing {
		return
	}
	if len(c.queue) >= c.cfg.SendQueue {
		c.closing = true
		c.queue = nil
		c.pendingClose = nil
		c.writerWG.Add(1)
		go func() {
			defer c.writerWG.Done()
			c.cancelOperations()
			c.sendCloseFrame(CloseTryAgainLater, "Client too slow: outgoing queue full; reconnect and resume")
		}()
		return
	}
	c.queue = append(c.queue, frame)
	if !c.writing {
		c.writing = true
		c.writerWG.Add(1)
		go c.flush()
	}
}

// flush writes queued messages until the queue is empty, then ends, sending the close frame a
// protocol close left pending. Whatever is queued when it looks is written as one batch: one
// system call for a burst instead of one per message.
func (c *conn) flush() {
	defer c.writerWG.Done()
	for {
		c.mu.Lock()
		if len(c.queue) == 0 || (c.closing && c.pendingClose == nil) {
			c.writing = false
			c.queue = nil
			pending := c.pendingClose
			c.pendingClose = nil
			c.mu.Unlock()
			if pending != nil {
				c.sendCloseFrame(pending.code, pending.reason)
			}
			return
		}
		frames := c.queue
		c.queue = nil
		c.mu.Unlock()

		if err := c.writeFrames(frames); err != nil {
			if !c.isClosing() && !errors.Is(err, websocket.ErrCloseSent) {
				log.Printf("transports: websocket write: %v", err)
			}
			c.markClosing()
			_ = c.ws.Close()
		}
	}
}

// writeFrames writes frames as text messages in one batch, unless the close frame is out.
func (c *conn) writeFrames(frames [][]byte) error {
	_ = c.out.SetWriteDeadline(time.Now().Add(c.cfg.WriteTimeout))
	return c.out.writeText(frames, func() bool { return !c.closeSent.Load() })
}

type closeRequest struct {
	code   int
	reason string
}
