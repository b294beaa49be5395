package multiinstance

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/store"
)

// Resolution is the life of one fork operation whose delivery became unknown, read from the
// durable event log: when it became unknown, when its first reconcile attempt fell due, and when
// it was settled (committed or failed) after that.
type Resolution struct {
	OperationID string
	UnknownAt   time.Time // the first event that shows it unknown
	DueAt       time.Time // UnknownAt + forkengine.FirstReconcileDelay
	ResolvedAt  time.Time // the first committed or failed event after UnknownAt; zero while unknown
	Status      forkengine.OperationStatus
}

// Resolved reports whether the operation was settled after it became unknown.
func (r Resolution) Resolved() bool { return !r.ResolvedAt.IsZero() }

// ReadResolutions reads the event log of workspace in the database at dsn (a SQLite file, opened
// read-only beside the server that holds it, or a PostgreSQL URL) and returns every operation
// that became unknown, by id.
func ReadResolutions(ctx context.Context, dsn, workspace string) (map[string]Resolution, error) {
	db, err := store.Open(ctx, store.Config{DSN: dsn, ReadOnly: !store.IsPostgresURL(dsn), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dsn, err)
	}
	defer db.Close()
	events, err := db.EventsAfter(ctx, workspace, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("read the event log: %w", err)
	}
	out := map[string]Resolution{}
	for _, ev := range events {
		if ev.Kind != forkengine.EventForkOperationUpdated {
			continue
		}
		r, seen := out[ev.OperationID]
		switch {
		case !seen && ev.Status == forkengine.StatusUnknown:
			out[ev.OperationID] = Resolution{OperationID: ev.OperationID, UnknownAt: ev.OccurredAt,
				DueAt: ev.OccurredAt.Add(forkengine.FirstReconcileDelay), Status: ev.Status}
		case seen && !r.Resolved() && (ev.Status == forkengine.StatusCommitted || ev.Status == forkengine.StatusFailed):
			r.ResolvedAt, r.Status = ev.OccurredAt, ev.Status
			out[ev.OperationID] = r
		}
	}
	return out, nil
}

// ReconcileBound is the documented bound on reconciliation (docs/api.md, "Unknown deliveries"):
// an attempt is made at most a third of the fork lease after the later of the moment it falls
// due and the start of the instance that makes it. An operation is resolved within that, plus
// what the provider took to answer, plus Slack for recording the answer on a loaded machine.
type ReconcileBound struct {
	Lease time.Duration // the instances' -fork-lease
	Slack time.Duration
	// Starts are the moments instances became ready, in any order: an attempt that fell due
	// while none ran counts from the start of the next one.
	Starts []time.Time
	// Answered is how long the provider took to answer each operation's last attempt (absent:
	// no time at all).
	Answered map[string]time.Duration
}

// Deadline is when r must have been resolved by.
func (b ReconcileBound) Deadline(r Resolution) time.Time {
	from := r.DueAt
	for _, s := range b.Starts {
		if s.After(from) && !s.After(r.ResolvedAt) { // an instance started after it fell due, before it was resolved
			from = s
		}
	}
	return from.Add(b.Lease/3 + b.Answered[r.OperationID] + b.Slack)
}

// Late lists the operations of rs resolved after their deadline, or not at all, with how late,
// worst first; and the worst lateness against the bound without Slack (negative: every one was
// within it, by that much at least).
func (b ReconcileBound) Late(rs map[string]Resolution) (late []string, worst time.Duration) {
	worst = -time.Hour
	type miss struct {
		id  string
		by  time.Duration
		res Resolution
	}
	var misses []miss
	for id, r := range rs {
		if !r.Resolved() {
			misses = append(misses, miss{id: id, by: time.Hour, res: r})
			continue
		}
		over := r.ResolvedAt.Sub(b.Deadline(r))
		worst = max(worst, over+b.Slack)
		if over > 0 {
			misses = append(misses, miss{id: id, by: over, res: r})
		}
	}
	sort.Slice(misses, func(i, j int) bool { return misses[i].by > misses[j].by })
	for _, m := range misses {
		if !m.res.Resolved() {
			late = append(late, fmt.Sprintf("%s: still unknown (unknown at %s)", m.id, m.res.UnknownAt.Format(time.TimeOnly)))
			continue
		}
		late = append(late, fmt.Sprintf("%s: %s late (unknown %s, resolved %s after it)", m.id, m.by.Round(time.Millisecond),
			m.res.UnknownAt.Format("15:04:05.000"), m.res.ResolvedAt.Sub(m.res.UnknownAt).Round(time.Millisecond)))
	}
	return late, worst
}

// SpreadOf describes how long after falling due the resolutions came: min, median, max.
func SpreadOf(rs map[string]Resolution) string {
	var ds []time.Duration
	for _, r := range rs {
		if r.Resolved() {
			ds = append(ds, r.ResolvedAt.Sub(r.DueAt))
		}
	}
	if len(ds) == 0 {
		return "none resolved"
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	parts := []string{ds[0].Round(time.Millisecond).String(), ds[len(ds)/2].Round(time.Millisecond).String(),
		ds[len(ds)-1].Round(time.Millisecond).String()}
	return fmt.Sprintf("%d resolved; after falling due min / median / max %s", len(ds), strings.Join(parts, " / "))
}
