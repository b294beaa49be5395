package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// DefaultTimeout bounds one adapter call when Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// DefaultMaxResponseBytes caps an adapter response body when Options.MaxResponseBytes is zero.
const DefaultMaxResponseBytes = 1 << 20

// DefaultMaxProbeRequestBytes is the /probe body size above which a batch is split, when
// Options.MaxProbeRequestBytes is zero: half the reference adapter's request limit.
const DefaultMaxProbeRequestBytes = 4 << 20

// Options configures a Driver.
type Options struct {
	// BaseURL is the adapter's base, e.g. "http://127.0.0.1:9000/forkgraph"; paths are appended.
	BaseURL string
	// Client sends the requests (default: a new http.Client). The driver uses a copy that never
	// follows redirects, because a followed redirect could deliver one fork twice.
	Client *http.Client
	// Timeout bounds each call, including reading the response (default DefaultTimeout). The
	// engine's DispatchTimeout also bounds Fork; whichever ends first wins.
	Timeout time.Duration
	// Headers are added to every request (e.g. an Authorization header for the adapter).
	Headers map[string]string
	// MaxResponseBytes caps a response body (default DefaultMaxResponseBytes). A larger fork
	// answer is unverifiable: disposition unknown.
	MaxResponseBytes int64
	// MaxProbeRequestBytes bounds one /probe request body (default DefaultMaxProbeRequestBytes):
	// a larger batch is sent as several requests, each under it, so an adapter's request limit
	// never turns a page of turns into "not forkable". A single probe above it is sent alone.
	MaxProbeRequestBytes int64
}

// Driver is a forkengine.Driver backed by an HTTP provider adapter. It is safe for concurrent use.
type Driver struct {
	base     string
	client   *http.Client
	timeout  time.Duration
	headers  map[string]string
	maxBytes int64
	maxProbe int64
	calls    atomic.Int64
}

var _ forkengine.Driver = (*Driver)(nil)

// New returns a webhook driver for the adapter at opts.BaseURL. It does not contact the adapter.
func New(opts Options) *Driver {
	client := &http.Client{}
	if opts.Client != nil {
		copied := *opts.Client
		client = &copied
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	d := &Driver{
		base:     strings.TrimRight(opts.BaseURL, "/"),
		client:   client,
		timeout:  opts.Timeout,
		headers:  opts.Headers,
		maxBytes: opts.MaxResponseBytes,
		maxProbe: opts.MaxProbeRequestBytes,
	}
	if d.timeout <= 0 {
		d.timeout = DefaultTimeout
	}
	if d.maxBytes <= 0 {
		d.maxBytes = DefaultMaxResponseBytes
	}
	if d.maxProbe <= 0 {
		d.maxProbe = DefaultMaxProbeRequestBytes
	}
	return d
}

// Calls returns how many requests the driver has attempted (sent or not).
func (d *Driver) Calls() int64 { return d.calls.Load() }

// reply is what came back from one adapter call.
type reply struct {
	status int
	body   []byte
	// sent is false only when the request provably never reached the adapter.
	sent bool
	// transport is true when the exchange itself failed (no connection, a timeout, a dropped
	// connection or a body that could not be read), as opposed to a request that could not be
	// built or an answer that was too large.
	transport bool
}

var errResponseTooLarge = errors.New("adapter response exceeds the size limit")

// post sends body as JSON to path and reads the whole (size-limited) response within the timeout.
// On error, reply.sent says whether the adapter may have seen the request.
func (d *Driver) post(ctx context.Context, path string, body any, extra map[string]string) (reply, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		d.calls.Add(1)
		return reply{}, fmt.Errorf("encode %s request: %w", path, err)
	}
	return d.send(ctx, path, payload, extra)
}

// send is post with the body already encoded.
func (d *Driver) send(ctx context.Context, path string, payload []byte, extra map[string]string) (reply, error) {
	d.calls.Add(1)
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		// Headers written to a connection is the earliest point at which the adapter could act.
		WroteHeaders: func() { wrote.Store(true) },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.base+path, bytes.NewReader(payload))
	if err != nil {
		return reply{}, fmt.Errorf("build %s request: %w", path, err)
	}
	d.setHeaders(req, extra)
	resp, err := d.client.Do(req)
	if err != nil {
		return reply{sent: wrote.Load(), transport: true}, fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, d.maxBytes+1))
	if err != nil {
		return reply{status: resp.StatusCode, sent: true, transport: true}, fmt.Errorf("read %s response: %w", path, err)
	}
	if int64(len(data)) > d.maxBytes {
		return reply{status: resp.StatusCode, sent: true}, fmt.Errorf("read %s response: %w", path, errResponseTooLarge)
	}
	return reply{status: resp.StatusCode, body: data, sent: true}, nil
}

func (d *Driver) setHeaders(req *http.Request, extra map[string]string) {
	for k, v := range d.headers {
		req.Header.Set(k, v)
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
}

// ok reports whether the status is 2xx.
func (r reply) ok() bool { return r.status >= 200 && r.status < 300 }

// availability wraps err in forkengine.ErrProviderUnavailable when the adapter could not be
// reached or answered 5xx (down, restarting, overloaded, or a gateway with nothing behind it):
// asking again later may well work, so a fork requested now must not read as unsupported. A 4xx,
// an undecodable 2xx or a well-formed refusal is the adapter's considered answer and stays as is.
func (r reply) availability(err error) error {
	if r.transport || r.status >= 500 {
		return fmt.Errorf("%w: %w", forkengine.ErrProviderUnavailable, err)
	}
	return err
}

// statusError describes a non-2xx answer, with the adapter's error text when it sent one.
func (r reply) statusError(path string) error {
	return fmt.Errorf("POST %s: %s", path, r.statusText())
}

// statusText is a non-2xx answer as a user may read it: the status and the adapter's own
// explanation, when its body has one.
func (r reply) statusText() string {
	var body errorBody
	if json.Unmarshal(r.body, &body) == nil && body.Error != "" {
		return fmt.Sprintf("the provider adapter answered HTTP %d: %s", r.status, body.Error)
	}
	return fmt.Sprintf("the provider adapter answered HTTP %d", r.status)
}

// clientText says what went wrong with an exchange, as a user may read it in an operation's
// error: never where. The Go error names the adapter's URL, with the user name, host, port and
// path it holds (net/http masks only the password), so it goes to the server log, which the
// engine writes with the operation id, and this fixed text to the operation.
func (r reply) clientText(err error) string {
	var netErr net.Error
	switch {
	case errors.Is(err, errResponseTooLarge):
		return "the provider adapter's answer is larger than forkgraph accepts"
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return "the provider adapter did not answer in time"
	case r.transport && !r.sent:
		return "the provider adapter could not be reached"
	case r.transport && r.status == 0:
		return "the connection to the provider adapter failed"
	case r.transport:
		return "the provider adapter's answer could not be read"
	case r.status != 0 && !r.ok():
		return r.statusText()
	}
	return "the request to the provider adapter could not be made"
}

// Describe asks the adapter what it can do for s. Any transport failure, non-2xx status or
// undecodable body is an error, which the engine treats as unsupported; a transport failure or a
// 5xx wraps forkengine.ErrProviderUnavailable, which makes a fork requested now the retryable
// PROVIDER_UNAVAILABLE instead.
func (d *Driver) Describe(ctx context.Context, s forkengine.Session) (forkengine.Descriptor, error) {
	r, err := d.post(ctx, "/describe", describeRequest{WorkspaceID: s.WorkspaceID, Session: toWireSession(s)}, nil)
	if err != nil {
		return forkengine.Descriptor{}, r.availability(err)
	}
	if !r.ok() {
		return forkengine.Descriptor{}, r.availability(r.statusError("/describe"))
	}
	var out wireDescriptor
	if err := json.Unmarshal(r.body, &out); err != nil {
		return forkengine.Descriptor{}, fmt.Errorf("decode /describe response: %w", err)
	}
	return out.domain(), nil
}
