package transports

import (
	"context"
	"log/slog"

	"github.com/forkgraph/forkgraph/access"
)

// logs is where a transport logs what it cannot tell its client (a panic, a result it could
// not encode, a failed write): the server's slog logger (the transport's Logger), with the id
// of the request the operation came in (access.RequestID), as every other server log line.
type logs struct {
	logger *slog.Logger // nil: slog.Default()
	ctx    context.Context
}

// logs is where the connection's operations log: the upgrade request's id.
func (c *conn) logs() logs { return logs{c.cfg.Logger, c.ctx} }

// error logs msg at error level with the request id and args.
func (l logs) error(msg string, args ...any) {
	logger := l.logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.ErrorContext(l.ctx, msg, append([]any{"requestId", access.RequestID(l.ctx)}, args...)...)
}
