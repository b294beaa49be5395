package webhook_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/webhook"
)

// TestForkTransportFailures covers failures where no complete answer arrived: not_started only when
// the request provably never left, unknown otherwise.
func TestForkTransportFailures(t *testing.T) {
	tests := []struct {
		name    string
		driver  func(t *testing.T) (*webhook.Driver, func() int64)
		ctx     func() context.Context
		want    forkengine.Disposition
		wantErr bool
	}{
		// The error beside not_started only explains (for the log); the disposition stands.
		{name: "NotStartedOnClosedPort", driver: closedPort, want: forkengine.DispositionNotStarted, wantErr: true},
		{name: "NotStartedOnBadURL", driver: badURL, want: forkengine.DispositionNotStarted, wantErr: true},
		{name: "NotStartedOnDNSFailure", driver: dnsFailure, want: forkengine.DispositionNotStarted, wantErr: true},
		{name: "NotStartedWhenContextEndedBeforeSending", driver: hangingAdapter, ctx: canceled,
			want: forkengine.DispositionNotStarted, wantErr: true},
		{name: "UnknownWhenAdapterHangsPastTimeout", driver: hangingAdapter,
			want: forkengine.DispositionUnknown, wantErr: true},
		{name: "UnknownWhenConnectionDropsAfterSending", driver: droppingAdapter,
			want: forkengine.DispositionUnknown, wantErr: true},
		{name: "UnknownWhenBodyStallsPastTimeout", driver: stallingBodyAdapter,
			want: forkengine.DispositionUnknown, wantErr: true},
		{name: "UnknownWhenResponseTooLarge", driver: oversizedAdapter,
			want: forkengine.DispositionUnknown, wantErr: true},
		{name: "UnknownOnRedirect", driver: redirectingAdapter, want: forkengine.DispositionUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, received := tt.driver(t)
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			res, err := d.Fork(ctx, forkRequest())
			if res.Disposition != tt.want || res.Error == "" {
				t.Fatalf("Fork = (%s, %q), want %s with an error text", res.Disposition, res.Error, tt.want)
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("Fork error = %v, want error %v", err, tt.wantErr)
			}
			requireNoAddress(t, res.Error)
			if tt.want == forkengine.DispositionNotStarted && received() != 0 {
				t.Fatalf("not_started, but the adapter received %d requests", received())
			}
		})
	}
}

func none() int64 { return 0 }

// requireNoAddress fails when text, which users read on an operation, names where the adapter
// is: a URL, an address, a host name of the tests' adapters, or a port.
func requireNoAddress(t *testing.T, text string) {
	t.Helper()
	for _, leak := range []string{"://", "127.0.0.1", "adapter.invalid", "bad host", "admin", "dial", "lookup", "/fork", "/reconcile"} {
		if strings.Contains(text, leak) {
			t.Fatalf("the text users read names the adapter (%q): %q", leak, text)
		}
	}
}

// TestTransportFailuresNameNoAddress: with the adapter down, the text of a fork and of a
// reconcile says what happened and never where: not the user name or password of its URL, its
// host, its port or its path. The Go error, for the server log, still says it all.
func TestTransportFailuresNameNoAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	d := webhook.New(webhook.Options{BaseURL: "http://admin:s3cret@" + addr + "/internal/adapter"})
	res, err := d.Fork(context.Background(), forkRequest())
	if res.Disposition != forkengine.DispositionNotStarted || err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("Fork = (%s, %q), %v: want not_started, and an error naming %s for the log", res.Disposition, res.Error, err, addr)
	}
	requireNoAddress(t, res.Error)
	if strings.Contains(res.Error, "s3cret") || strings.Contains(res.Error, "internal") {
		t.Fatalf("fork error text %q names the URL", res.Error)
	}
	rec, err := d.Reconcile(context.Background(), reconcileRequest())
	if rec.Answer != forkengine.ReconcileUnknown || err == nil || !errors.Is(err, forkengine.ErrProviderUnavailable) {
		t.Fatalf("Reconcile = (%s, %q), %v: want unknown and an unavailable error", rec.Answer, rec.Error, err)
	}
	requireNoAddress(t, rec.Error)
	if rec.Error != "the provider adapter could not be reached" {
		t.Fatalf("reconcile text %q, want the fixed text of an unreachable adapter", rec.Error)
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// waitForClient blocks a handler until the client gives up. The server only notices a closed
// connection once the request body has been read, so it is drained first; the test's end releases
// the handler in any case, so a broken driver fails by its assertions rather than hanging.
func waitForClient(t *testing.T, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-t.Context().Done():
	}
}

func closedPort(t *testing.T) (*webhook.Driver, func() int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there any more: connection refused
	return webhook.New(webhook.Options{BaseURL: "http://" + addr}), none
}

func badURL(*testing.T) (*webhook.Driver, func() int64) {
	return webhook.New(webhook.Options{BaseURL: "http://bad host:x"}), none
}

func dnsFailure(*testing.T) (*webhook.Driver, func() int64) {
	// A dialer that fails name resolution, so the test needs no resolver and no network.
	transport := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.DNSError{Err: "no such host", Name: "adapter.invalid", IsNotFound: true}
	}}
	client := &http.Client{Transport: transport}
	return webhook.New(webhook.Options{BaseURL: "http://adapter.invalid", Client: client}), none
}

// hangingAdapter accepts the request and never answers; the driver's timeout ends the call.
func hangingAdapter(t *testing.T) (*webhook.Driver, func() int64) {
	d, hits := adapter(t, webhook.Options{Timeout: 200 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) {
		waitForClient(t, r)
	})
	return d, hits.Load
}

// droppingAdapter reads the request, then closes the connection without answering.
func droppingAdapter(t *testing.T) (*webhook.Driver, func() int64) {
	d, hits := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		_ = conn.Close()
	})
	return d, hits.Load
}

// stallingBodyAdapter sends headers and part of the body, then stalls past the timeout.
func stallingBodyAdapter(t *testing.T) (*webhook.Driver, func() int64) {
	d, hits := adapter(t, webhook.Options{Timeout: 200 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		_, _ = w.Write([]byte(`{"disposition":"acc`))
		w.(http.Flusher).Flush()
		waitForClient(t, r)
	})
	return d, hits.Load
}

func oversizedAdapter(t *testing.T) (*webhook.Driver, func() int64) {
	d, hits := adapter(t, webhook.Options{MaxResponseBytes: 64}, func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, `{"disposition":"accepted","providerSessionId":"`+strings.Repeat("x", 100)+`"}`)
	})
	return d, hits.Load
}

// redirectingAdapter answers 307; following it would deliver the fork a second time.
func redirectingAdapter(t *testing.T) (*webhook.Driver, func() int64) {
	d, hits := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			t.Errorf("the driver followed a redirect")
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	return d, hits.Load
}

func TestDescribeErrorOnClosedPort(t *testing.T) {
	d, _ := closedPort(t)
	if _, err := d.Describe(context.Background(), sourceSession()); err == nil {
		t.Fatal("Describe against a closed port succeeded")
	}
	var opErr *net.OpError
	_, err := d.ProbeTurns(context.Background(), []forkengine.Probe{{Session: sourceSession(), Turn: boundTurn("t1", 1)}})
	if !errors.As(err, &opErr) {
		t.Fatalf("ProbeTurns error = %v, want a wrapped *net.OpError", err)
	}
}

// TestForkIsNeverResentOnABrokenReusedConnection: Go's client resends a replayable request by
// itself when a kept-alive connection turns out dead. A fork must not be replayable, or a provider
// that acted before the connection broke would get it twice.
func TestForkIsNeverResentOnABrokenReusedConnection(t *testing.T) {
	var forks atomic.Int64
	d, _ := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/adapter/describe" {
			reply(w, 200, `{"kind":"k","version":"1","stateBindingMode":"host_copy","throughTurn":true}`)
			return
		}
		forks.Add(1)
		_, _ = io.Copy(io.Discard, r.Body) // the adapter has the whole request, then the connection dies
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		_ = conn.Close()
	})
	// Describe first, so the fork goes out on the kept-alive connection.
	if _, err := d.Describe(context.Background(), sourceSession()); err != nil {
		t.Fatal(err)
	}
	res, _ := d.Fork(context.Background(), forkRequest())
	if res.Disposition != forkengine.DispositionUnknown {
		t.Fatalf("Fork = %s (%q), want unknown", res.Disposition, res.Error)
	}
	if forks.Load() != 1 {
		t.Fatalf("adapter received the fork %d times, want exactly once", forks.Load())
	}
}
