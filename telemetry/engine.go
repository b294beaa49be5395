package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Drivers returns ds with every driver wrapped by Driver under its provider name.
func (t *Telemetry) Drivers(ds map[string]forkengine.Driver) map[string]forkengine.Driver {
	out := make(map[string]forkengine.Driver, len(ds))
	for name, d := range ds {
		out[name] = t.Driver(name, d)
	}
	return out
}

// The driver families of each provider wrapped are exported at 0 from the start (seed.go).

// Driver wraps d so that each call is counted (forkgraph_driver_calls_total), timed and traced
// (a client span per call), and each probe's batch size is observed. The wrapper is a
// forkengine.Reconciler exactly when d is one, and a forkengine.BindingRecoverer exactly when d
// is one, so the engine still finds reconciliation and binding recovery, and passes session
// validation (forkengine.SessionValidator) through.
func (t *Telemetry) Driver(provider string, d forkengine.Driver) forkengine.Driver {
	w := driver{t: t, provider: provider, next: d}
	t.Metrics.seedProvider(provider)
	r, reconciles := d.(forkengine.Reconciler)
	b, recovers := d.(forkengine.BindingRecoverer)
	switch {
	case reconciles && recovers:
		return reconcilingRecoveringDriver{reconcilingDriver{driver: w, reconciler: r}, bindingRecovery{w, b}}
	case reconciles:
		return reconcilingDriver{driver: w, reconciler: r}
	case recovers:
		return recoveringDriver{w, bindingRecovery{w, b}}
	}
	return w
}

type driver struct {
	t        *Telemetry
	provider string
	next     forkengine.Driver
}

// Kinds of driver call, the kind label.
const (
	kindDescribe  = "describe"
	kindProbe     = "probe"
	kindFork      = "fork"
	kindReconcile = "reconcile"
	kindRecover   = "recover_binding"
)

// Describe calls the driver's Describe.
func (d driver) Describe(ctx context.Context, s forkengine.Session) (forkengine.Descriptor, error) {
	ctx, done := d.start(ctx, kindDescribe)
	desc, err := d.next.Describe(ctx, s)
	done(okOrError(err), err)
	return desc, err
}

// ProbeTurns calls the driver's ProbeTurns.
func (d driver) ProbeTurns(ctx context.Context, probes []forkengine.Probe) ([]bool, error) {
	d.t.Metrics.probeBatch.WithLabelValues(d.provider).Observe(float64(len(probes)))
	ctx, done := d.start(ctx, kindProbe, attribute.Int("forkgraph.probe.turns", len(probes)))
	answers, err := d.next.ProbeTurns(ctx, probes)
	done(okOrError(err), err)
	return answers, err
}

// Fork calls the driver's Fork; the disposition label is the answer's disposition.
func (d driver) Fork(ctx context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
	ctx, done := d.start(ctx, kindFork, attribute.String("forkgraph.operation.id", req.OperationID))
	res, err := d.next.Fork(ctx, req)
	done(dispositionLabel(res.Disposition, err), err)
	return res, err
}

// start opens the call's span and returns the function that ends it and records the call.
func (d driver) start(ctx context.Context, kind string, attrs ...attribute.KeyValue) (context.Context, func(string, error)) {
	begin := time.Now()
	attrs = append(attrs, attribute.String("forkgraph.provider", d.provider))
	ctx, span := d.t.tracer.Start(ctx, "driver."+kind, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, func(disposition string, err error) {
		m := d.t.Metrics
		m.driverCalls.WithLabelValues(d.provider, kind, disposition).Inc()
		m.driverDuration.WithLabelValues(d.provider, kind).Observe(time.Since(begin).Seconds())
		span.SetAttributes(attribute.String("forkgraph.disposition", disposition))
		if err != nil {
			span.SetStatus(codes.Error, disposition)
		}
		span.End()
	}
}

// ValidateSession asks the driver to check a reported session when it can
// (forkengine.SessionValidator); a driver that cannot accepts every session, which is what the
// engine does for a driver without the method, so the wrapper may always have it.
func (d driver) ValidateSession(s forkengine.Session) error {
	if v, ok := d.next.(forkengine.SessionValidator); ok {
		return v.ValidateSession(s)
	}
	return nil
}

// reconcilingDriver is a driver whose provider can say what became of an unknown fork.
type reconcilingDriver struct {
	driver
	reconciler forkengine.Reconciler
}

// Reconcile calls the driver's Reconcile; the disposition label is its answer.
func (d reconcilingDriver) Reconcile(ctx context.Context, req forkengine.ReconcileRequest) (forkengine.ReconcileResult, error) {
	ctx, done := d.start(ctx, kindReconcile, attribute.String("forkgraph.operation.id", req.OperationID),
		attribute.Int("forkgraph.reconcile.attempt", req.Attempt))
	res, err := d.reconciler.Reconcile(ctx, req)
	done(answerLabel(res.Answer, err), err)
	return res, err
}

// bindingRecovery is the RecoverBinding of a wrapped driver that has one. It holds the driver
// rather than embedding it, so the wrappers that embed both have one Describe.
type bindingRecovery struct {
	d    driver
	next forkengine.BindingRecoverer
}

// RecoverBinding calls the driver's RecoverBinding; the disposition label is its answer.
func (b bindingRecovery) RecoverBinding(ctx context.Context, req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
	ctx, done := b.d.start(ctx, kindRecover)
	res, err := b.next.RecoverBinding(ctx, req)
	done(recoveryLabel(res.Answer, err), err)
	return res, err
}

// recoveringDriver is a driver whose provider can find a lost turn binding in its history.
type recoveringDriver struct {
	driver
	bindingRecovery
}

// reconcilingRecoveringDriver is a driver that does both.
type reconcilingRecoveringDriver struct {
	reconcilingDriver
	bindingRecovery
}

// recoveryLabel is a binding recovery's answer, "error" for an error without one, and otherLabel
// for a value outside forkengine's set.
func recoveryLabel(a forkengine.RecoveryAnswer, err error) string {
	switch a {
	case forkengine.RecoveryFound, forkengine.RecoveryAbsent, forkengine.RecoveryAmbiguous:
		return string(a)
	case "":
		return okOrError(err)
	}
	return otherLabel
}

// answerLabel is a reconcile answer, "error" for an error without one, and otherLabel for a
// value outside forkengine's set.
func answerLabel(a forkengine.ReconcileAnswer, err error) string {
	switch a {
	case forkengine.ReconcileFound, forkengine.ReconcileAbsent, forkengine.ReconcileUnknown:
		return string(a)
	case "":
		return okOrError(err)
	}
	return otherLabel
}

func okOrError(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// dispositionLabel is a fork's disposition, "error" for an error without one, and otherLabel for
// a value outside forkengine's set.
func dispositionLabel(d forkengine.Disposition, err error) string {
	switch d {
	case forkengine.DispositionAccepted, forkengine.DispositionNotStarted, forkengine.DispositionRejected,
		forkengine.DispositionUnsupported, forkengine.DispositionUnknown:
		return string(d)
	case "":
		return okOrError(err)
	}
	return otherLabel
}

// Store wraps s so that every Update transaction is timed by outcome and traced, and lease
// claims and renewals are counted.
func (t *Telemetry) Store(s forkengine.Store) forkengine.Store { return store{Store: s, t: t} }

type store struct {
	forkengine.Store
	t *Telemetry
}

// Update runs the transaction of the wrapped store.
func (s store) Update(ctx context.Context, fn func(tx forkengine.Tx) error) error {
	begin := time.Now()
	ctx, span := s.t.tracer.Start(ctx, "store.update")
	err := s.Store.Update(ctx, fn)
	outcome := "commit"
	if err != nil {
		outcome = "rollback"
		span.SetStatus(codes.Error, outcome)
	}
	s.t.Metrics.txDuration.WithLabelValues(outcome).Observe(time.Since(begin).Seconds())
	span.End()
	return err
}

// ClaimOperations claims leases through the wrapped store and counts the operations claimed:
// unknown ones are claimed for a reconcile attempt, the others by start-up recovery or the
// periodic takeover of expired leases.
func (s store) ClaimOperations(ctx context.Context, c forkengine.LeaseClaim) ([]forkengine.ForkOperation, error) {
	ops, err := s.Store.ClaimOperations(ctx, c)
	claim := "takeover"
	if c.TakeAll || c.TakeOwn {
		claim = "startup"
	}
	for _, op := range ops {
		if op.Status == forkengine.StatusUnknown {
			s.t.Metrics.leaseClaims.WithLabelValues("reconcile").Inc()
		} else {
			s.t.Metrics.leaseClaims.WithLabelValues(claim).Inc()
		}
	}
	return ops, err
}

// ClaimOperation claims one operation through the wrapped store (an on-demand reconcile attempt)
// and counts it when claimed.
func (s store) ClaimOperation(ctx context.Context, key forkengine.OperationKey, c forkengine.LeaseClaim) (forkengine.ForkOperation, bool, error) {
	op, claimed, err := s.Store.ClaimOperation(ctx, key, c)
	if claimed {
		s.t.Metrics.leaseClaims.WithLabelValues("reconcile").Inc()
	}
	return op, claimed, err
}

// RenewLeases renews through the wrapped store and counts renewed and lost leases.
func (s store) RenewLeases(ctx context.Context, owner string, ops []forkengine.OperationKey, until time.Time) ([]forkengine.OperationKey, error) {
	renewed, err := s.Store.RenewLeases(ctx, owner, ops, until)
	if err == nil {
		m := s.t.Metrics
		m.leaseRenewals.WithLabelValues("renewed").Add(float64(len(renewed)))
		m.leaseRenewals.WithLabelValues("lost").Add(float64(len(ops) - len(renewed)))
	}
	return renewed, err
}

// Batch observes one dataloader batch: its size, and a span for its read. Give it to
// resolvers.Config.Batch.
func (t *Telemetry) Batch(ctx context.Context, loader string, keys int) (context.Context, func(error)) {
	t.Metrics.loaderBatch.WithLabelValues(loader).Observe(float64(keys))
	ctx, span := t.tracer.Start(ctx, "dataloader."+loader, trace.WithAttributes(attribute.Int("forkgraph.batch.keys", keys)))
	return ctx, func(err error) {
		if err != nil {
			span.SetStatus(codes.Error, "batch read failed")
		}
		span.End()
	}
}

// DetachContext starts the span of a fork's background work as a new trace linked to the
// request that started it (forkengine.Config.DetachContext): the work outlives the request, so
// it is not the request's child. end ends the span.
func (t *Telemetry) DetachContext(ctx context.Context) (context.Context, func()) {
	detached, span := t.tracer.Start(context.WithoutCancel(ctx), "fork.process", trace.WithNewRoot(),
		trace.WithLinks(trace.LinkFromContext(ctx, attribute.String("forkgraph.link", "started by"))))
	return detached, func() { span.End() }
}
