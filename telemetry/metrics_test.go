package telemetry

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/forkgraph/forkgraph/forkengine"
)

// exercise touches every collector, so every family has a series to lint.
func exercise(tel *Telemetry) {
	m := tel.Metrics
	m.WatchPool(func() sql.DBStats { return sql.DBStats{OpenConnections: 2, InUse: 1, Idle: 1, WaitCount: 3} })
	m.WatchFeed(func() int64 { return 5 }, func(context.Context) (int64, error) { return 8, nil })
	m.graphqlRequests.WithLabelValues("query", "Q", "OK").Inc()
	m.graphqlDuration.WithLabelValues("query", "Q").Observe(0.01)
	m.graphqlErrors.WithLabelValues("NOT_FOUND").Inc()
	m.subscriptions.WithLabelValues("S").Inc()
	m.subscriptionSent.WithLabelValues("S").Inc()
	m.resumeRequired.WithLabelValues("S").Inc()
	m.httpResponses.WithLabelValues("200").Inc()
	obs := tel.Transports()
	obs.QueueBytes(10)
	obs.Dropped("sse")
	m.connections.WithLabelValues("sse").Inc()
	m.connectionsOpened.WithLabelValues("sse").Inc()
	m.websocketCloses.WithLabelValues(closeCodeLabel(1000)).Inc()
	tel.Publisher(nil, nil).Publish([]forkengine.Event{
		{Kind: forkengine.EventForkOperationUpdated, OperationID: "o", Status: forkengine.StatusPrepared, OccurredAt: time.Unix(0, 0)},
		{Kind: forkengine.EventForkOperationUpdated, OperationID: "o", Status: forkengine.StatusCommitted, OccurredAt: time.Unix(2, 0)},
	})
	d := tel.Driver("fake", fakeDriver{})
	_, _ = d.Describe(context.Background(), forkengine.Session{})
	_, _ = d.ProbeTurns(context.Background(), make([]forkengine.Probe, 3))
	_, _ = d.Fork(context.Background(), forkengine.ForkRequest{})
	_, end := tel.Batch(context.Background(), "sessions", 4)
	end(nil)
	st := tel.Store(fakeStore{})
	_ = st.Update(context.Background(), func(forkengine.Tx) error { return nil })
	_, _ = st.ClaimOperations(context.Background(), forkengine.LeaseClaim{TakeOwn: true})
	_, _ = st.ClaimOperations(context.Background(), forkengine.LeaseClaim{})
	_, _, _ = st.ClaimOperation(context.Background(), forkengine.OperationKey{}, forkengine.LeaseClaim{})
	_, _ = st.RenewLeases(context.Background(), "me", make([]forkengine.OperationKey, 3), time.Time{})
}

func TestMetricsPassLint(t *testing.T) {
	tel := New(Options{Build: Build{Version: "v1.2.3", Commit: "abc", GoVersion: "go1.26.8"}})
	exercise(tel)
	problems, err := testutil.GatherAndLint(tel.Metrics.Registry)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	families, err := tel.Metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	gathered := map[string]bool{}
	for _, f := range families {
		name := f.GetName()
		gathered[name] = true
		if !strings.HasPrefix(name, "forkgraph_") && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("metric %s is not forkgraph_*, go_* or process_*", name)
		}
	}
	for _, name := range tel.Metrics.Names() {
		if !gathered[name] {
			t.Errorf("Names lists %s, which the registry does not gather", name)
		}
	}
	for name := range gathered {
		if strings.HasPrefix(name, "forkgraph_") && !slices.Contains(tel.Metrics.Names(), name) {
			t.Errorf("Names misses %s", name)
		}
	}
	want := `
# HELP forkgraph_build_info Always 1; the labels describe the running binary.
# TYPE forkgraph_build_info gauge
forkgraph_build_info{commit="abc",goversion="go1.26.8",version="v1.2.3"} 1
`
	if err := testutil.GatherAndCompare(tel.Metrics.Registry, strings.NewReader(want), "forkgraph_build_info"); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(tel.Metrics.driverCalls.WithLabelValues("fake", "fork", "error")); got != 1 {
		t.Fatalf("a fork that errs without a disposition is counted as error, got %v", got)
	}
}

func TestOperationNamesAreBounded(t *testing.T) {
	set := newLabelSet(maxOperationNames)
	distinct := map[string]bool{}
	for i := range 3 * maxOperationNames {
		distinct[set.value(fmt.Sprintf("Op%d", i))] = true
	}
	if len(distinct) != maxOperationNames+1 || !distinct[otherLabel] {
		t.Fatalf("%d label values, want %d names and %q", len(distinct), maxOperationNames, otherLabel)
	}
	if set.value("Op0") != "Op0" {
		t.Fatal("an admitted name keeps its label")
	}
	if set.value(strings.Repeat("x", maxNameLength+1)) != otherLabel {
		t.Fatal("an overlong name is other")
	}
	if closeCodeLabel(4999) != otherLabel || closeCodeLabel(0) != "none" || closeCodeLabel(1013) != "1013" {
		t.Fatal("close codes outside the known set are other")
	}
}

type fakeDriver struct{}

func (fakeDriver) Describe(context.Context, forkengine.Session) (forkengine.Descriptor, error) {
	return forkengine.Descriptor{}, nil
}

func (fakeDriver) ProbeTurns(_ context.Context, probes []forkengine.Probe) ([]bool, error) {
	return make([]bool, len(probes)), nil
}

func (fakeDriver) Fork(context.Context, forkengine.ForkRequest) (forkengine.ForkResult, error) {
	return forkengine.ForkResult{}, errors.New("adapter unreachable")
}

// fakeStore runs Update's function without a transaction, claims two unfinished operations and
// one unknown one (or the one asked for), and renews all but one lease; its reads are not used.
type fakeStore struct{ forkengine.Store }

func (fakeStore) Update(_ context.Context, fn func(forkengine.Tx) error) error { return fn(nil) }

func (fakeStore) ClaimOperations(context.Context, forkengine.LeaseClaim) ([]forkengine.ForkOperation, error) {
	return []forkengine.ForkOperation{{Status: forkengine.StatusDispatching}, {Status: forkengine.StatusPrepared},
		{Status: forkengine.StatusUnknown}}, nil
}

func (fakeStore) ClaimOperation(context.Context, forkengine.OperationKey, forkengine.LeaseClaim) (forkengine.ForkOperation, bool, error) {
	return forkengine.ForkOperation{Status: forkengine.StatusUnknown}, true, nil
}

func (fakeStore) RenewLeases(_ context.Context, _ string, ops []forkengine.OperationKey, _ time.Time) ([]forkengine.OperationKey, error) {
	return ops[1:], nil
}

func TestStoreAndFeedMetrics(t *testing.T) {
	tel := New(Options{})
	exercise(tel)
	m := tel.Metrics
	for name, c := range map[string]struct{ got, want float64 }{
		"claims startup":   {testutil.ToFloat64(m.leaseClaims.WithLabelValues("startup")), 2},
		"claims takeover":  {testutil.ToFloat64(m.leaseClaims.WithLabelValues("takeover")), 2},
		"claims reconcile": {testutil.ToFloat64(m.leaseClaims.WithLabelValues("reconcile")), 3},
		"renewals renewed": {testutil.ToFloat64(m.leaseRenewals.WithLabelValues("renewed")), 2},
		"renewals lost":    {testutil.ToFloat64(m.leaseRenewals.WithLabelValues("lost")), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", name, c.got, c.want)
		}
	}
	want := `
# HELP forkgraph_event_feed_lag_events Events in the durable log this instance's feed has not delivered yet (log head minus feed position).
# TYPE forkgraph_event_feed_lag_events gauge
forkgraph_event_feed_lag_events 3
# HELP forkgraph_event_feed_position Cursor of the last event this instance's feed delivered to its subscribers.
# TYPE forkgraph_event_feed_position gauge
forkgraph_event_feed_position 5
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "forkgraph_event_feed_lag_events", "forkgraph_event_feed_position"); err != nil {
		t.Fatal(err)
	}
}

// fakeReconciler is a driver that can reconcile.
type fakeReconciler struct{ fakeDriver }

func (fakeReconciler) Reconcile(_ context.Context, req forkengine.ReconcileRequest) (forkengine.ReconcileResult, error) {
	if req.Attempt == 1 {
		return forkengine.ReconcileResult{Answer: forkengine.ReconcileUnknown}, nil
	}
	return forkengine.ReconcileResult{Answer: forkengine.ReconcileFound, ProviderSessionID: "child"}, nil
}

func TestDriverKeepsReconciliation(t *testing.T) {
	tel := New(Options{})
	if _, ok := tel.Driver("plain", fakeDriver{}).(forkengine.Reconciler); ok {
		t.Fatal("a driver that cannot reconcile must not look as if it could")
	}
	r, ok := tel.Driver("rec", fakeReconciler{}).(forkengine.Reconciler)
	if !ok {
		t.Fatal("the wrapper of a Reconciler hides it from the engine")
	}
	for attempt := 1; attempt <= 2; attempt++ {
		if _, err := r.Reconcile(context.Background(), forkengine.ReconcileRequest{Attempt: attempt}); err != nil {
			t.Fatal(err)
		}
	}
	for answer, want := range map[string]float64{"unknown": 1, "found": 1} {
		if got := testutil.ToFloat64(tel.Metrics.driverCalls.WithLabelValues("rec", "reconcile", answer)); got != want {
			t.Errorf("reconcile %s = %v, want %v", answer, got, want)
		}
	}
}

// fakeRecoverer is a driver that can recover bindings, and one that can also reconcile.
type (
	fakeRecoverer            struct{ fakeDriver }
	fakeReconcilingRecoverer struct{ fakeReconciler }
)

func recoverAnswer(req forkengine.BindingRecoveryRequest) forkengine.BindingRecoveryResult {
	if req.Proof.ClientSubmitID == "twice" {
		return forkengine.BindingRecoveryResult{Answer: forkengine.RecoveryAmbiguous}
	}
	return forkengine.BindingRecoveryResult{Answer: forkengine.RecoveryFound, ProviderTurnID: "pt"}
}

func (fakeRecoverer) RecoverBinding(_ context.Context, req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
	return recoverAnswer(req), nil
}

func (fakeReconcilingRecoverer) RecoverBinding(_ context.Context, req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
	return recoverAnswer(req), nil
}

func TestDriverKeepsBindingRecovery(t *testing.T) {
	tel := New(Options{})
	for name, d := range map[string]forkengine.Driver{"plain": fakeDriver{}, "rec": fakeReconciler{}} {
		if _, ok := tel.Driver(name, d).(forkengine.BindingRecoverer); ok {
			t.Fatalf("%s: a driver that cannot recover bindings must not look as if it could", name)
		}
	}
	for name, d := range map[string]forkengine.Driver{"recover": fakeRecoverer{}, "both": fakeReconcilingRecoverer{}} {
		wrapped := tel.Driver(name, d)
		b, ok := wrapped.(forkengine.BindingRecoverer)
		if !ok {
			t.Fatalf("%s: the wrapper of a BindingRecoverer hides it from the engine", name)
		}
		if _, reconciles := wrapped.(forkengine.Reconciler); reconciles != (name == "both") {
			t.Fatalf("%s: the wrapper reconciles = %v", name, reconciles)
		}
		for _, id := range []string{"once", "twice"} {
			req := forkengine.BindingRecoveryRequest{Proof: forkengine.BindingProof{ClientSubmitID: id}}
			if _, err := b.RecoverBinding(context.Background(), req); err != nil {
				t.Fatal(err)
			}
		}
		for answer, want := range map[string]float64{"found": 1, "ambiguous": 1} {
			if got := testutil.ToFloat64(tel.Metrics.driverCalls.WithLabelValues(name, "recover_binding", answer)); got != want {
				t.Errorf("%s: recover_binding %s = %v, want %v", name, answer, got, want)
			}
		}
	}
}

// validatingDriver refuses sessions without a title.
type validatingDriver struct{ fakeDriver }

func (validatingDriver) ValidateSession(s forkengine.Session) error {
	if s.Title == "" {
		return errors.New("untitled")
	}
	return nil
}

func TestDriverKeepsSessionValidation(t *testing.T) {
	tel := New(Options{})
	v, ok := tel.Driver("v", validatingDriver{}).(forkengine.SessionValidator)
	if !ok || v.ValidateSession(forkengine.Session{}) == nil || v.ValidateSession(forkengine.Session{Title: "t"}) != nil {
		t.Fatal("the wrapper must pass validation through to a validating driver")
	}
	if err := tel.Driver("plain", fakeDriver{}).(forkengine.SessionValidator).ValidateSession(forkengine.Session{}); err != nil {
		t.Fatalf("a driver that does not validate accepts every session, got %v", err)
	}
}

// The leases held and the store's retries are read from their sources at every scrape.
func TestWorkMetricsReadTheirSources(t *testing.T) {
	tel := New(Options{})
	held, retries := 3, int64(7)
	tel.Metrics.WatchWork(func() int { return held }, func() int64 { return retries })
	want := func(h int, r int64) string {
		return fmt.Sprintf(`
# HELP forkgraph_fork_leases_held Fork operations this instance is driving now, whose leases it renews.
# TYPE forkgraph_fork_leases_held gauge
forkgraph_fork_leases_held %d
# HELP forkgraph_store_transaction_retries_total Store transactions run again after the database aborted them for a deadlock or a serialisation conflict.
# TYPE forkgraph_store_transaction_retries_total counter
forkgraph_store_transaction_retries_total %d
`, h, r)
	}
	names := []string{"forkgraph_fork_leases_held", "forkgraph_store_transaction_retries_total"}
	if err := testutil.GatherAndCompare(tel.Metrics.Registry, strings.NewReader(want(3, 7)), names...); err != nil {
		t.Fatal(err)
	}
	held, retries = 0, 9
	if err := testutil.GatherAndCompare(tel.Metrics.Registry, strings.NewReader(want(0, 9)), names...); err != nil {
		t.Fatal(err)
	}
}

// The store's statement count is read from its source at every scrape.
func TestStatementsMetricReadsItsSource(t *testing.T) {
	tel := New(Options{})
	n := int64(41)
	tel.Metrics.WatchStatements(func() int64 { return n })
	want := func(v int64) string {
		return fmt.Sprintf(`
# HELP forkgraph_store_statements_total SQL statements the store has run (queries and execs, inside transactions too; BEGIN and COMMIT not counted).
# TYPE forkgraph_store_statements_total counter
forkgraph_store_statements_total %d
`, v)
	}
	for _, v := range []int64{41, 97} {
		n = v
		if err := testutil.GatherAndCompare(tel.Metrics.Registry, strings.NewReader(want(v)), "forkgraph_store_statements_total"); err != nil {
			t.Fatal(err)
		}
	}
}

// The SQLite checkpointer's counters are read from their source at every scrape.
func TestSQLiteCheckpointMetricsReadTheirSource(t *testing.T) {
	tel := New(Options{})
	st := SQLiteCheckpoints{Runs: 12, Restarts: 2, Failures: 1, Busy: 1500 * time.Millisecond, WriteLockHeld: 250 * time.Millisecond, LogFrames: 4096}
	tel.Metrics.WatchSQLiteCheckpoints(func() SQLiteCheckpoints { return st })
	want := func(s SQLiteCheckpoints) string {
		return fmt.Sprintf(`
# HELP forkgraph_store_sqlite_checkpoints_total Checkpoints the SQLite checkpointer ran (each copies the write-ahead log's new frames into the database file).
# TYPE forkgraph_store_sqlite_checkpoints_total counter
forkgraph_store_sqlite_checkpoints_total %d
# HELP forkgraph_store_sqlite_checkpoint_seconds_total Time the SQLite checkpointer spent checkpointing, beside the writers.
# TYPE forkgraph_store_sqlite_checkpoint_seconds_total counter
forkgraph_store_sqlite_checkpoint_seconds_total %g
# HELP forkgraph_store_sqlite_checkpoint_write_wait_seconds_total Time writers waited for the SQLite checkpointer: the last copy before the write-ahead log starts over.
# TYPE forkgraph_store_sqlite_checkpoint_write_wait_seconds_total counter
forkgraph_store_sqlite_checkpoint_write_wait_seconds_total %g
# HELP forkgraph_store_sqlite_log_restarts_total Times the SQLite write-ahead log was fully copied so the next writer started it over.
# TYPE forkgraph_store_sqlite_log_restarts_total counter
forkgraph_store_sqlite_log_restarts_total %d
# HELP forkgraph_store_sqlite_checkpoint_failures_total SQLite checkpoints that failed (logged; the next pass tries again).
# TYPE forkgraph_store_sqlite_checkpoint_failures_total counter
forkgraph_store_sqlite_checkpoint_failures_total %d
# HELP forkgraph_store_sqlite_log_frames Frames (pages) in the SQLite write-ahead log at the checkpointer's last pass.
# TYPE forkgraph_store_sqlite_log_frames gauge
forkgraph_store_sqlite_log_frames %d
`, s.Runs, s.Busy.Seconds(), s.WriteLockHeld.Seconds(), s.Restarts, s.Failures, s.LogFrames)
	}
	for _, next := range []SQLiteCheckpoints{st, {Runs: 13, Restarts: 2, Failures: 1, Busy: 2 * time.Second, WriteLockHeld: 300 * time.Millisecond, LogFrames: 10}} {
		st = next
		if err := testutil.GatherAndCompare(tel.Metrics.Registry, strings.NewReader(want(st)), checkpointNames...); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range checkpointNames {
		if !slices.Contains(tel.Metrics.Names(), name) {
			t.Errorf("Names misses %s", name)
		}
	}
}

// The SQLite write-group counters are read from their source at every scrape.
func TestSQLiteWriteMetricsReadTheirSource(t *testing.T) {
	tel := New(Options{})
	st := SQLiteWrites{Transactions: 40, Groups: 7, Grouped: 19, Reruns: 1}
	tel.Metrics.WatchSQLiteWrites(func() SQLiteWrites { return st })
	want := func(s SQLiteWrites) string {
		return fmt.Sprintf(`
# HELP forkgraph_store_sqlite_write_transactions_total Write transactions the SQLite store ran (one per write, or one per group of queued writes).
# TYPE forkgraph_store_sqlite_write_transactions_total counter
forkgraph_store_sqlite_write_transactions_total %d
# HELP forkgraph_store_sqlite_write_groups_total SQLite write transactions that committed several writes queued behind one another.
# TYPE forkgraph_store_sqlite_write_groups_total counter
forkgraph_store_sqlite_write_groups_total %d
# HELP forkgraph_store_sqlite_grouped_writes_total Writes that ran in those grouped SQLite transactions.
# TYPE forkgraph_store_sqlite_grouped_writes_total counter
forkgraph_store_sqlite_grouped_writes_total %d
# HELP forkgraph_store_sqlite_write_group_reruns_total Grouped SQLite transactions that broke, so that each of their writes ran again alone (logged).
# TYPE forkgraph_store_sqlite_write_group_reruns_total counter
forkgraph_store_sqlite_write_group_reruns_total %d
`, s.Transactions, s.Groups, s.Grouped, s.Reruns)
	}
	for _, next := range []SQLiteWrites{st, {Transactions: 52, Groups: 9, Grouped: 27, Reruns: 1}} {
		st = next
		if err := testutil.GatherAndCompare(tel.Metrics.Registry, strings.NewReader(want(st)), writeGroupNames...); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range writeGroupNames {
		if !slices.Contains(tel.Metrics.Names(), name) {
			t.Errorf("Names misses %s", name)
		}
	}
}
