package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// probeItem is one element of probeRequest.Probes.
type probeItem = struct {
	Session wireSession `json:"session"`
	Turn    wireTurn    `json:"turn"`
}

// largestBinding is a turn binding as large as forkgraph accepts (64 KiB).
func largestBinding() json.RawMessage {
	return json.RawMessage(`{"rollout":"` + strings.Repeat("r", 64<<10-20) + `"}`)
}

// The webhook driver sends /probe bodies of up to 4 MiB plus one probe; the adapter reads them.
func TestProbeAcceptsTheLargestBodyTheDriverSends(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	src := wireSession{WorkspaceID: "ws", ID: "src", Provider: "webhook", ProviderSessionID: "thread-1",
		Settings: json.RawMessage(`{"notes":"` + strings.Repeat("x", 64<<10-20) + `"}`)}
	var req probeRequest
	for size := 0; size < 5<<20; size += 2 * (64 << 10) {
		turn := boundTurn(fmt.Sprintf("t%d", len(req.Probes)+1), int64(len(req.Probes)+1))
		turn.ProviderTurnBinding = largestBinding()
		req.Probes = append(req.Probes, probeItem{Session: src, Turn: turn})
	}
	var out probeResponse
	if status := ta.post(t, "/probe", req, &out); status != 200 || len(out.Forkable) != len(req.Probes) {
		t.Fatalf("probe of %d probes = %d with %d answers, want 200 with all", len(req.Probes), status, len(out.Forkable))
	}
}

// A fork of any prefix is one session and one turn (the rest is counted, not sent): at the largest
// session and binding forkgraph accepts, it is within the adapter's limit.
func TestForkOfALongPrefixWithLargeBindingsIsAccepted(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	req := forkOf("r1")
	req.PrefixTurns, req.BoundTurns = 1_000_000, 1_000_000
	req.Source.Settings = json.RawMessage(`{"notes":"` + strings.Repeat("x", 64<<10-20) + `"}`)
	req.ThroughTurn.ProviderTurnBinding = largestBinding()
	if status, got := ta.fork(t, req); status != 200 || got.Disposition != dispositionAccepted {
		t.Fatalf("fork of a million-turn prefix = %d %+v, want 200 accepted", status, got)
	}
}

// A /fork larger than the adapter reads is refused outright (413, rejected, with the reason), so
// the fork fails cleanly instead of staying unknown, and nothing is made.
func TestForkLargerThanTheLimitIsRejected(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	ta.maxForkBytes = 32 << 10
	req := forkOf("r1")
	req.ThroughTurn.ProviderTurnBinding = largestBinding()
	status, got := ta.fork(t, req)
	if status != 413 || got.Disposition != dispositionRejected || !strings.Contains(got.Error, "larger than this adapter accepts") {
		t.Fatalf("oversized fork = %d %+v, want 413 rejected with the reason", status, got)
	}
	if n := len(ta.onDisk(t).Sessions); n != 0 {
		t.Fatalf("state has %d sessions, want none", n)
	}
}
