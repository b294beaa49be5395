package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// connectTimeout bounds Open's first connection: a database host that drops packets would
// otherwise hold the start-up for as long as the kernel keeps retrying.
const connectTimeout = 15 * time.Second

// ErrUnreachable is returned by Open when the database does not answer its first connection.
var ErrUnreachable = errors.New("cannot connect to the database")

// connect opens Open's first connection, so that a database that cannot be reached fails the
// start with one line: gorm's own ping logged the error through the store's logger (as a
// warning that named a gorm source file) before returning it, and pgx lists every attempt it made
// (TLS, then plain) with the same dial error in each. The error wraps ErrUnreachable.
func connect(ctx context.Context, sqlDB *sql.DB, d dialect, dsn string) error {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	err := sqlDB.PingContext(ctx)
	if err == nil {
		return nil
	}
	where := ""
	if d.name == DriverPostgres {
		if u, perr := url.Parse(dsn); perr == nil && u.Host != "" {
			where = " at " + u.Host
		}
	}
	return fmt.Errorf("%w%s (%s): %s", ErrUnreachable, where, d.name, connectCause(ctx, err))
}

// connectCause is the one reason a first connection failed: what the server said, the network
// error, the timeout, or else the driver's text on one line.
func connectCause(ctx context.Context, err error) string {
	var pgErr *pgconn.PgError
	var opErr *net.OpError
	switch {
	case errors.As(err, &pgErr):
		return fmt.Sprintf("the server refused: %s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
	case errors.As(err, &opErr):
		return opErr.Error()
	case ctx.Err() != nil:
		return fmt.Sprintf("no answer within %s", connectTimeout)
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
