package transports

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestMain lets more of the parallel tests run at once than go test's default of GOMAXPROCS
// (-parallel), unless -parallel is given: they mostly wait on a peer's pace, closeGrace or a
// write deadline, not on the CPU, and with two cores two at a time made their waits add up.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(max(8, 4*runtime.GOMAXPROCS(0))))
	}
	os.Exit(m.Run())
}
