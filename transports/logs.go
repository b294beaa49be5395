package transports

import (
	"context"
	"log/slog"
)

// logs is where a transport logs what it cannot tell its client (a panic, a result it could
// not encode, a failed write): the server's slog logger (the transport's Logger), with the id
// of the request the operation came in (its RequestID, e.g. access.RequestID: transports do not
// import access, whose tests import transports), as every other server log line.
type logs struct {
	logger    *slog.Logger // nil: slog.Default()
	requestID func(context.Context) string
	ctx       context.Context
}

// logs is where the connection's operations log: the upgrade request's id.
func (c *conn) logs() logs { return logs{c.cfg.Logger, c.cfg.RequestID, c.ctx} }

// error logs msg at error level with the request id and args.
func (l logs) error(msg string, args ...any) {
	logger := l.logger
	if logger == nil {
		logger = slog.Default()
	}
	if l.requestID != nil {
		args = append([]any{"requestId", l.requestID(l.ctx)}, args...)
	}
	logger.ErrorContext(l.ctx, msg, args...)
}
