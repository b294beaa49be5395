package store

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
)

// IsUnavailable reports whether err means the database could not be reached or could not do the
// work for a reason of its own, so that the same request may well work in a moment: on
// PostgreSQL, a server restarting or unreachable (a refused connection, a connection terminated
// by the server or cut on the way, SQLSTATE class 08, 57P01-57P03, or out of resources, class
// 53); on SQLite, disk errors (SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN) and a database held
// busy or locked past its timeout. The server answers such an error with the retryable
// UNAVAILABLE (HTTP 503) instead of INTERNAL_SERVER_ERROR.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var connect *pgconn.ConnectError
	var pgErr *pgconn.PgError
	var sqliteErr sqlite3.Error
	var netErr *net.OpError // not net.Error: context.DeadlineExceeded is one of those
	switch {
	case errors.As(err, &pgErr):
		return unavailableState(pgErr.Code)
	case errors.As(err, &sqliteErr):
		switch sqliteErr.Code {
		case sqlite3.ErrIoErr, sqlite3.ErrFull, sqlite3.ErrCantOpen, sqlite3.ErrBusy, sqlite3.ErrLocked:
			return true
		}
		return false
	case errors.As(err, &connect), errors.As(err, &netErr):
		return true
	}
	// A connection the server closed mid-answer, or one database/sql found dead.
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, sql.ErrConnDone) || pgconn.SafeToRetry(err)
}

// unavailableState reports the SQLSTATEs of a server that cannot serve now: connection
// exceptions (08), an administrator's or a crash's shutdown, a server still starting (57P01,
// 57P02, 57P03), and insufficient resources (53: a full disk, no memory, too many connections).
func unavailableState(code string) bool {
	switch {
	case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"):
		return true
	}
	return code == "57P01" || code == "57P02" || code == "57P03"
}
