package await

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	var polls atomic.Int32
	Until(t, 10*time.Second, "the third poll", func() bool { return polls.Add(1) == 3 })
	if n := polls.Load(); n != 3 {
		t.Fatalf("polled %d times, want 3", n)
	}
}

// fatalTB records a failure the way testing.T stops a test: Fatalf ends the goroutine.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestStateFailsWithWhatItLastSaw(t *testing.T) {
	t.Parallel()
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		State(tb, 20*time.Millisecond, "the count to reach 1", func() (bool, string) { return false, "count 0" })
		tb.msg = "State returned without the condition"
	}()
	<-done
	for _, want := range []string{"the count to reach 1", "not within 20ms", "last: count 0"} {
		if !strings.Contains(tb.msg, want) {
			t.Errorf("failure %q does not say %q", tb.msg, want)
		}
	}
}

func TestPollStopsAtAnErrorOrTheContext(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	if err := Poll(context.Background(), time.Minute, func() (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("Poll with a failing check = %v, want %v", err, boom)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Poll(ctx, time.Minute, func() (bool, error) { return false, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Poll after its context ended = %v, want context.Canceled", err)
	}
	if err := Poll(context.Background(), 5*time.Millisecond, func() (bool, error) { return false, nil }); err == nil {
		t.Error("Poll past its limit returned nil")
	}
}
