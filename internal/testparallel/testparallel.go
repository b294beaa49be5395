// Package testparallel raises how many parallel tests of a test binary run at once, for the
// packages whose parallel tests mostly wait (on a server process, a timer, a lease, a peer's
// pace) rather than compute.
//
// go test runs a binary's parallel tests -parallel at a time, by default GOMAXPROCS: two on a
// two-core machine. That is right for tests that use a core each; for tests that spend seconds
// waiting it leaves the cores idle while the rest of the package queues behind two waits.
package testparallel

import (
	"flag"
	"runtime"
	"strconv"
)

// PerCore makes perCore × GOMAXPROCS the -test.parallel of this test binary unless its command
// line gave one (`go test -parallel 1` still means one). Call it from TestMain before m.Run.
func PerCore(perCore int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(perCore*runtime.GOMAXPROCS(0))); err != nil {
			panic("testparallel: " + err.Error()) // not a test binary: no -test.parallel to set
		}
	}
}
