package resolvers_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A live subscriber holds no goroutine of its own between events: the connection's reader is
// all a websocket keeps while it waits (the operation parks on its engine stream, and the
// goroutine an event wakes writes that event and ends). With thousands of subscribers a parked
// goroutine each was most of their memory.
func TestLiveSubscribersHoldNoGoroutineBetweenEvents(t *testing.T) {
	api := newTestAPI(t, apiOptions{})
	const n = 20
	clients := api.dialMany(n, nil)
	idle := settledGoroutines()
	api.subscribeLive(clients, "1", liveEvents, map[string]any{"ws": "w"})
	for _, title := range []string{"one", "two"} {
		api.reportTitle("w", "s1", title)
		for _, c := range clients {
			require.Len(t, readTitles(c, "1", 1), 1)
		}
		// Fewer than one goroutine per subscriber more than before they subscribed: none each.
		require.Eventually(t, func() bool { return runtime.NumGoroutine() < idle+n/2 }, 5*time.Second, 5*time.Millisecond,
			"goroutines: %d with %d live subscribers, %d before they subscribed", runtime.NumGoroutine(), n, idle)
	}

	// A parked operation that the client completes still ends: its engine stream is closed.
	subscribers := api.broker.Subscribers()
	require.NoError(t, clients[0].conn.WriteJSON(map[string]any{"id": "1", "type": "complete"}))
	require.Eventually(t, func() bool { return api.broker.Subscribers() == subscribers-1 }, 5*time.Second, time.Millisecond)
	api.reportTitle("w", "s1", "three")
	for _, c := range clients[1:] {
		require.Len(t, readTitles(c, "1", 1), 1)
	}
}

// settledGoroutines is the goroutine count once it has stopped falling.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 50 {
		time.Sleep(10 * time.Millisecond)
		if m := runtime.NumGoroutine(); m >= n {
			return m
		} else {
			n = m
		}
	}
	return n
}
