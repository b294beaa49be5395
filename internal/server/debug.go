package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// listenDebug opens the profiling listener on addr, which must be a loopback address: profiles
// and the runtime's memory statistics (/debug/pprof/heap?debug=1) describe the process's
// internals and are for the operator on this machine only.
func listenDebug(addr string) (net.Listener, error) {
	if err := requireLoopback(addr); err != nil {
		return nil, fmt.Errorf("-debug-addr: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on debug address %s: %w", addr, err)
	}
	return ln, nil
}

// serveDebug serves net/http/pprof on ln (from listenDebug). It returns a function that stops
// the listener.
func serveDebug(ln net.Listener, logger *slog.Logger) func(context.Context) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Error("debug listener stopped", "err", err)
		}
	}()
	logger.Info("profiling on loopback", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return srv.Shutdown
}

// requireLoopback accepts host:port whose host is a loopback IP or "localhost".
func requireLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%q is not a loopback address", addr)
	}
	return nil
}
