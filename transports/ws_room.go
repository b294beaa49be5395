package transports

import "time"

// A live subscription that finds its connection's queue full does not wait for room in the
// goroutine that runs it. That goroutine is usually one of the few shared runners
// (ws_runners.go): a client that stopped reading with twenty subscriptions held twenty of them,
// the others waited their turn behind the stall check, and a healthy subscriber of the same
// workspace fell 128 events behind and was told to resume (issue 21). Instead the operation
// parks with its result (streamRun.pending) until the writer makes progress or the connection
// closes, and a slow check closes the connection with 1013 after SlowClientTimeout without
// progress, as a producer waiting in place does (waitForRoomLocked). A slow client's backlog is
// then its own: its results, its queue, its engine streams.

// offerResult is what became of the frame an operation offered its connection.
type offerResult int

const (
	offerQueued  offerResult = iota // queued; a writer runs or has been told to
	offerWriter                     // queued, and the caller has become the writer: it must flush
	offerDropped                    // not queued: the operation or the connection has ended
	offerParked                     // not queued yet: the run waits for room with no goroutine
)

// offer queues run's pending frame: at once when there is room; else a run that can park parks
// until there is (offerParked: leave the run alone, another goroutine may continue it), and one
// that cannot (its stream has no readiness: it already has a goroutine of its own) waits here.
// The final frame (`complete` or `error`) also ends the operation, unless the client ended it
// first.
func (c *conn) offer(run *streamRun) offerResult {
	frame := run.pending
	c.mu.Lock()
	defer c.mu.Unlock()
	if run.rs.side.Ready() == nil {
		if !c.waitForRoomLocked(len(frame)) {
			return c.droppedLocked(run)
		}
	} else if !c.closing && !run.op.gone && !c.hasRoomLocked(len(frame)) {
		c.parkForRoomLocked(run)
		return offerParked
	}
	if c.closing || run.op.gone {
		return c.droppedLocked(run)
	}
	if run.final {
		c.removeLocked(run.op)
	}
	if c.queueLocked(frame) {
		return offerWriter
	}
	return offerQueued
}

// droppedLocked counts a result the closing connection drops (not the final frame, which is
// no result) and reports offerDropped.
func (c *conn) droppedLocked(run *streamRun) offerResult {
	if c.closing && !run.final {
		c.cfg.Observer.dropped(c.subprotocol)
	}
	return offerDropped
}

// parkForRoomLocked parks run until the writer takes the queue or the connection closes
// (wakeLocked), or the operation ends (its context's wake). Parking needs no check of the
// operation's context: room or the close always comes, the slow check sees to the latter.
func (c *conn) parkForRoomLocked(run *streamRun) {
	run.parked.Store(true)
	c.roomWaiters = append(c.roomWaiters, run)
	if c.slowCheck == nil {
		c.slowCheck = time.AfterFunc(time.Until(c.progressAt.Add(c.cfg.SlowClientTimeout)), c.checkSlow)
	}
}

// wakeRoomWaitersLocked continues the runs parked for room; each offers its frame again.
func (c *conn) wakeRoomWaitersLocked() {
	for i, run := range c.roomWaiters {
		run.wake()
		c.roomWaiters[i] = nil
	}
	c.roomWaiters = c.roomWaiters[:0]
}

// checkSlow closes the connection with 1013 when runs still wait for room and the writer has
// made no progress for SlowClientTimeout; else it checks again when that could next be so.
func (c *conn) checkSlow() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slowCheck = nil
	if c.closing || len(c.roomWaiters) == 0 {
		return
	}
	if wait := time.Until(c.progressAt.Add(c.cfg.SlowClientTimeout)); wait > 0 {
		c.slowCheck = time.AfterFunc(wait, c.checkSlow)
		return
	}
	c.closeTooSlowLocked()
}
