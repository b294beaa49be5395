package forkengine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// forkabilityFixture returns the source and its latest turn (turn-7, settled and bound).
func forkabilityFixture(t *testing.T, h *harness) (forkengine.Session, forkengine.Turn) {
	t.Helper()
	h.seed(7)
	s, err := h.store.GetSession(h.ctx, ws, source)
	require.NoError(t, err)
	turn, err := h.store.GetTurn(h.ctx, ws, "turn-7")
	require.NoError(t, err)
	return s, turn
}

func TestTurnForkability(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		edit   func(h *harness, s *forkengine.Session, turn *forkengine.Turn)
		want   bool
		probes int
	}{
		{"OK", func(*harness, *forkengine.Session, *forkengine.Turn) {}, true, 1},
		{"FalseNotSettled", func(_ *harness, _ *forkengine.Session, turn *forkengine.Turn) { turn.Phase = forkengine.PhaseSettling }, false, 0},
		{"FalseNoProviderTurn", func(_ *harness, _ *forkengine.Session, turn *forkengine.Turn) { turn.ProviderTurnID = "" }, false, 0},
		{"FalseLegacyProviderTurn", func(_ *harness, _ *forkengine.Session, turn *forkengine.Turn) { turn.ProviderTurnID = turn.ID }, false, 0},
		{"FalseEmptyBinding", func(_ *harness, _ *forkengine.Session, turn *forkengine.Turn) {
			turn.ProviderTurnBinding = []byte(`{}`)
		}, false, 0},
		{"FalseChildSession", func(_ *harness, s *forkengine.Session, _ *forkengine.Turn) { s.Kind = forkengine.SessionChild }, false, 0},
		{"FalseNoProviderSession", func(_ *harness, s *forkengine.Session, _ *forkengine.Turn) { s.ProviderSessionID = "" }, false, 0},
		{"FalseUnknownDriver", func(_ *harness, s *forkengine.Session, _ *forkengine.Turn) { s.Provider = "nobody" }, false, 0},
		{"FalseProbeSaysNo", func(h *harness, _ *forkengine.Session, _ *forkengine.Turn) { h.driver.SetProbe(false, nil) }, false, 1},
		{"FalseProbeError", func(h *harness, _ *forkengine.Session, _ *forkengine.Turn) {
			h.driver.SetProbe(true, errors.New("runtime down"))
		}, false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			s, turn := forkabilityFixture(t, h)
			tc.edit(h, &s, &turn)
			got := h.engine.TurnForkability(h.ctx, []forkengine.ForkabilityQuery{{Session: s, Turn: turn}})
			require.Equal(t, []bool{tc.want}, got)
			require.Equal(t, tc.probes, h.driver.ProbeCalls())
			require.Equal(t, forkengine.BindingBound == forkengine.TurnBindingState(turn, got[0]), tc.want)
		})
	}
}

// Scenarios 5-8 and SPEC §3: one ProbeTurns call per provider per batch, identical turns probed
// once, and a failing provider fails closed without affecting another.
func TestTurnForkabilityBatching(t *testing.T) {
	t.Parallel()
	t.Run("OKOneCallForManySessions", func(t *testing.T) {
		h := newHarness(t)
		var qs []forkengine.ForkabilityQuery
		for i := range 100 {
			id := fmt.Sprintf("session-%03d", i)
			s := h.session(id, "provider-"+id, id)
			turn := h.turn(id, "turn-of-"+id, forkengine.PhaseSettled)
			qs = append(qs, forkengine.ForkabilityQuery{Session: s, Turn: turn})
		}
		got := h.engine.TurnForkability(h.ctx, qs)
		require.Len(t, got, 100)
		require.NotContains(t, got, false)
		require.Equal(t, 1, h.driver.ProbeBatches())
		require.Equal(t, 100, h.driver.ProbeCalls())
	})
	t.Run("OKIdenticalTurnsProbedOnce", func(t *testing.T) {
		h := newHarness(t)
		s, latest := forkabilityFixture(t, h)
		earlier, err := h.store.GetTurn(h.ctx, ws, "turn-6")
		require.NoError(t, err)
		h.driver.SetTurnProbe("provider-turn-6", false)
		qs := []forkengine.ForkabilityQuery{{s, latest}, {s, earlier}, {s, latest}}
		require.Equal(t, []bool{true, false, true}, h.engine.TurnForkability(h.ctx, qs))
		require.Equal(t, 1, h.driver.ProbeBatches())
		require.Equal(t, 2, h.driver.ProbeCalls())
	})
	t.Run("OKOneCallPerProvider", func(t *testing.T) {
		other := forkenginetest.NewScriptedDriver()
		other.SetProbe(true, errors.New("other provider down"))
		h := newHarness(t, func(cfg *forkengine.Config) { cfg.Drivers["other"] = other })
		s, turn := forkabilityFixture(t, h)
		o := s
		o.Provider = "other"
		qs := []forkengine.ForkabilityQuery{{s, turn}, {o, turn}, {s, turn}, {o, turn}}
		require.Equal(t, []bool{true, false, true, false}, h.engine.TurnForkability(h.ctx, qs))
		require.Equal(t, 1, h.driver.ProbeBatches())
		require.Equal(t, 1, other.ProbeBatches())
	})
	t.Run("OKNothingToProbe", func(t *testing.T) {
		h := newHarness(t)
		s, turn := forkabilityFixture(t, h)
		turn.Phase = forkengine.PhaseRunning
		require.Equal(t, []bool{false}, h.engine.TurnForkability(h.ctx, []forkengine.ForkabilityQuery{{s, turn}}))
		require.Empty(t, h.engine.TurnForkability(h.ctx, nil))
		require.Equal(t, 0, h.driver.ProbeBatches())
	})
}

// Scenarios 2 and 3: the session capability comes from the descriptor and ignores busy state.
func TestCapabilities(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(h *harness, s *forkengine.Session)
		want forkengine.LifecycleCapabilities
		call int
	}{
		{"OK", func(*harness, *forkengine.Session) {}, forkengine.LifecycleCapabilities{ForkThroughTurn: true}, 1},
		{"OKWhileBusy", func(h *harness, _ *forkengine.Session) {
			h.turn(source, "turn-8", forkengine.PhaseRunning)
		}, forkengine.LifecycleCapabilities{ForkThroughTurn: true}, 1},
		{"OKProviderOwnedWithFullSession", func(h *harness, _ *forkengine.Session) {
			h.driver.SetDescriptor(forkengine.Descriptor{Kind: "native", Version: "v1",
				StateBindingMode: forkengine.BindingProviderOwned, ThroughTurn: true, FullSession: true}, nil)
		}, forkengine.LifecycleCapabilities{Fork: true, ForkThroughTurn: true}, 1},
		{"FalseDescribeError", func(h *harness, _ *forkengine.Session) {
			h.driver.SetDescriptor(forkenginetest.ScriptedDescriptor, errors.New("runtime gone"))
		}, forkengine.LifecycleCapabilities{}, 1},
		{"FalseNoVersion", func(h *harness, _ *forkengine.Session) {
			h.driver.SetDescriptor(forkengine.Descriptor{Kind: "k", StateBindingMode: forkengine.BindingHostCopy, ThroughTurn: true}, nil)
		}, forkengine.LifecycleCapabilities{}, 1},
		{"FalseChild", func(_ *harness, s *forkengine.Session) { s.Kind = forkengine.SessionChild }, forkengine.LifecycleCapabilities{}, 0},
		{"FalseNoProviderSession", func(_ *harness, s *forkengine.Session) { s.ProviderSessionID = "" }, forkengine.LifecycleCapabilities{}, 0},
		{"FalseNoDriver", func(_ *harness, s *forkengine.Session) { s.Provider = "nobody" }, forkengine.LifecycleCapabilities{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			s, _ := forkabilityFixture(t, h)
			describes := h.driver.DescribeCalls()
			tc.edit(h, &s)
			require.Equal(t, []forkengine.LifecycleCapabilities{tc.want}, h.engine.Capabilities(h.ctx, []forkengine.Session{s}))
			require.Equal(t, tc.call, h.driver.DescribeCalls()-describes)
		})
	}
}

// rendezvousDriver answers Describe only once the test releases it after n calls wait at once, so a
// Capabilities that described sessions one after another would never finish.
type rendezvousDriver struct {
	forkenginetest.ScriptedDriver
	arrived chan struct{}
	release chan struct{}
}

func (d *rendezvousDriver) Describe(ctx context.Context, s forkengine.Session) (forkengine.Descriptor, error) {
	d.arrived <- struct{}{}
	select {
	case <-d.release:
	case <-ctx.Done():
		return forkengine.Descriptor{}, ctx.Err()
	}
	return forkenginetest.ScriptedDescriptor, nil
}

// A page of sessions is described concurrently (a remote driver answers over the network), and
// every answer lands on its own session.
func TestCapabilitiesDescribesConcurrently(t *testing.T) {
	t.Parallel()
	const n = 4
	d := &rendezvousDriver{arrived: make(chan struct{}, n), release: make(chan struct{})}
	engine, err := forkengine.New(forkengine.Config{Store: forkenginetest.NewMemStore(),
		Drivers: map[string]forkengine.Driver{"remote": d}})
	require.NoError(t, err)
	sessions := make([]forkengine.Session, n+1)
	for i := range sessions {
		sessions[i] = forkengine.Session{WorkspaceID: "w", ID: fmt.Sprint("s", i), Kind: forkengine.SessionRoot,
			Provider: "remote", ProviderSessionID: "p"}
	}
	sessions[n].Kind = forkengine.SessionChild // never described

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	go func() {
		for range n {
			select {
			case <-d.arrived:
			case <-ctx.Done():
				return
			}
		}
		close(d.release) // all n were waiting at once
	}()
	caps := engine.Capabilities(ctx, sessions)
	for i := range n {
		require.True(t, caps[i].ForkThroughTurn, "session %d", i)
	}
	require.False(t, caps[n].ForkThroughTurn)
}
