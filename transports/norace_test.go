//go:build !race

package transports

// raceEnabled is false without the race detector (race_test.go).
const raceEnabled = false
