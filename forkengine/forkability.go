package forkengine

import (
	"context"
	"slices"
	"strings"
	"sync"
)

// TurnForkability answers Turn.providerForkBindingAvailable for each query, in order. A turn is
// forkable only when it is settled and provider-bound, its session is a root with a provider
// session and a known driver, and the driver's probe says yes. Everything short of that is false
// without a probe, and so is every turn of a workspace whose forking is switched off (one store
// read for the batch's workspaces). The remaining probes are grouped by provider, identical ones
// are sent once, and each provider gets one ProbeTurns call; an error or a short answer makes its
// whole batch false. It never errors: forkability fails closed.
func (e *Engine) TurnForkability(ctx context.Context, qs []ForkabilityQuery) []bool {
	out := make([]bool, len(qs))
	worthy := make([]bool, len(qs))
	workspaces := map[string]bool{}
	for i, q := range qs {
		if worthy[i] = e.probeWorthy(q); worthy[i] {
			workspaces[q.Session.WorkspaceID] = true
		}
	}
	off := e.forkingOffLogged(ctx, workspaces)
	// Count first, so each batch's probes (a session and a turn each) are allocated once.
	counts := map[string]int{}
	for i, q := range qs {
		if worthy[i] = worthy[i] && !off[q.Session.WorkspaceID]; worthy[i] {
			counts[q.Session.Provider]++
		}
	}
	batches := make(map[string]*probeBatch, len(counts))
	for p, n := range counts {
		batches[p] = &probeBatch{probes: make([]Probe, 0, n), keys: make([]string, 0, n), positions: make(map[string][]int, n)}
	}
	for i, q := range qs {
		if worthy[i] {
			batches[q.Session.Provider].add(i, q)
		}
	}
	providers := make([]string, 0, len(batches))
	for p := range batches {
		providers = append(providers, p)
	}
	slices.Sort(providers) // a stable call order keeps tests and logs readable
	for _, p := range providers {
		batches[p].answer(ctx, e.cfg.Drivers[p], out)
	}
	return out
}

// probeWorthy applies every rule that needs no provider to a query.
func (e *Engine) probeWorthy(q ForkabilityQuery) bool {
	s, t := q.Session, q.Turn
	return t.Settled() && t.HasProviderBinding() && t.SessionID == s.ID && t.WorkspaceID == s.WorkspaceID &&
		s.Kind == SessionRoot && s.ProviderSessionID != "" && !s.Deleted() && e.cfg.Drivers[s.Provider] != nil
}

// probeBatch is one provider's deduplicated probes and the query positions each answers.
type probeBatch struct {
	probes    []Probe
	keys      []string
	positions map[string][]int
}

func (b *probeBatch) add(i int, q ForkabilityQuery) {
	key := strings.Join([]string{q.Session.WorkspaceID, q.Session.ID, q.Turn.ID, q.Turn.ProviderTurnID,
		string(q.Turn.ProviderTurnBinding)}, "\x00")
	if _, seen := b.positions[key]; !seen {
		b.probes = append(b.probes, Probe{Session: q.Session, Turn: q.Turn})
		b.keys = append(b.keys, key)
	}
	b.positions[key] = append(b.positions[key], i)
}

func (b *probeBatch) answer(ctx context.Context, driver Driver, out []bool) {
	answers, err := driver.ProbeTurns(ctx, b.probes)
	if err != nil || len(answers) != len(b.probes) {
		return // fail closed: the batch stays false
	}
	for j, key := range b.keys {
		for _, i := range b.positions[key] {
			out[i] = answers[j]
		}
	}
}

// Capabilities resolves Session.lifecycleCapabilities for each session, in order, from the
// driver's descriptor: forkThroughTurn needs a root session with a provider session and a driver
// whose descriptor supports it; fork (full session) follows the same rule with its own flag. The
// answer ignores whether the session is busy. In a workspace whose forking is switched off both
// are false and no driver is asked. Any error is false; it never errors.
func (e *Engine) Capabilities(ctx context.Context, sessions []Session) []LifecycleCapabilities {
	out := make([]LifecycleCapabilities, len(sessions))
	describable := func(s Session) bool {
		return s.Kind == SessionRoot && s.ProviderSessionID != "" && e.cfg.Drivers[s.Provider] != nil
	}
	workspaces := map[string]bool{}
	for _, s := range sessions {
		if describable(s) {
			workspaces[s.WorkspaceID] = true
		}
	}
	off := e.forkingOffLogged(ctx, workspaces)
	// Describe is one call per session; a remote driver answers over the network, so a page of
	// sessions is described a few at a time instead of one after another.
	limit := make(chan struct{}, describeConcurrency)
	var wg sync.WaitGroup
	for i, s := range sessions {
		driver := e.cfg.Drivers[s.Provider]
		if !describable(s) || off[s.WorkspaceID] {
			continue
		}
		wg.Add(1)
		limit <- struct{}{}
		go func() {
			defer func() { <-limit; wg.Done() }()
			if desc, err := driver.Describe(ctx, s); err == nil {
				out[i] = LifecycleCapabilities{Fork: desc.SupportsFullSession(), ForkThroughTurn: desc.SupportsThroughTurn()}
			}
		}()
	}
	wg.Wait()
	return out
}

// forkingOffLogged is forkingOff for the projections: a failed read is logged and every workspace
// of the batch reads as off (fail closed).
func (e *Engine) forkingOffLogged(ctx context.Context, workspaces map[string]bool) map[string]bool {
	off, err := e.forkingOff(ctx, workspaces)
	if err != nil {
		e.log.Warn("forkability reads as off: the workspace settings could not be read", "error", err)
	}
	return off
}

// describeConcurrency bounds the Describe calls Capabilities makes at once.
const describeConcurrency = 8
