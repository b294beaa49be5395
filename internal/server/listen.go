package server

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// listeners are the sockets the server serves: the API's and, when configured, the metrics and
// profiling ones. They are opened first at start-up, before the database: an address that is
// taken or refused then fails the start in one line, without a database created, migrated and
// seeded for nothing (and left behind).
type listeners struct {
	api, metrics, debug net.Listener
}

// checkListenAddr refuses a listen address that is not host:port, saying the form it takes. A
// port alone ("8080", what a new user types first) was answered by the open-mode check as an
// address that is not loopback.
func checkListenAddr(flag, variable, addr, example string) error {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return nil
	}
	if port, err := strconv.Atoi(addr); err == nil && port >= 0 && port <= 65535 {
		example = "127.0.0.1:" + addr
	}
	return fmt.Errorf("%s (%s): %q is not host:port; give, for example, %s", flag, variable, addr, example)
}

// listen opens every listener cfg asks for, or none: on an error the ones already open are
// closed again.
func listen(cfg config) (*listeners, error) {
	l := &listeners{}
	var err error
	if l.api, err = net.Listen("tcp", cfg.addr); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	if cfg.observe.metricsAddr != "" {
		if l.metrics, err = net.Listen("tcp", cfg.observe.metricsAddr); err != nil {
			l.close()
			return nil, fmt.Errorf("listen on metrics address %s: %w", cfg.observe.metricsAddr, err)
		}
	}
	if cfg.debugAddr != "" {
		if l.debug, err = listenDebug(cfg.debugAddr); err != nil {
			l.close()
			return nil, err
		}
	}
	return l, nil
}

// close closes every listener still open; the ones a server already closed are skipped.
func (l *listeners) close() {
	for _, ln := range []net.Listener{l.api, l.metrics, l.debug} {
		if ln != nil {
			if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
				continue // nothing left to do with a listener that will not close
			}
		}
	}
}
