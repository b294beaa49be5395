//go:build race

package transports

// raceEnabled: the race detector slows every goroutine several times, so the tests whose
// windows are timers (ws_ping_test.go, the ping-interval tests) widen them.
const raceEnabled = true
