package store

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"

	"github.com/forkgraph/forkgraph/forkengine"
)

// classify wraps a database error with context, adding forkengine.ErrDuplicate for a unique
// violation and forkengine.ErrNotFound for a foreign key violation (a row referring to a session
// or turn that does not exist). The driver error stays in the chain.
func classify(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	switch {
	case isUniqueViolation(err):
		return fmt.Errorf("%s: %w: %w", what, forkengine.ErrDuplicate, err)
	case isForeignKeyViolation(err):
		return fmt.Errorf("%s: referenced row %w: %w", what, forkengine.ErrNotFound, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// PostgreSQL SQLSTATE codes.
const (
	pgUniqueViolation      = "23505"
	pgForeignKeyViolation  = "23503"
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
)

// isRetryable reports whether PostgreSQL aborted the transaction only to resolve a conflict
// with another one, so running it again can succeed.
func isRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == pgSerializationFailure || pe.Code == pgDeadlockDetected)
}

func isUniqueViolation(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == pgUniqueViolation
}

func isForeignKeyViolation(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.ExtendedCode == sqlite3.ErrConstraintForeignKey || se.ExtendedCode == sqlite3.ErrConstraintTrigger // interactionOwnerMigration
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == pgForeignKeyViolation
}

func notFound(what, workspaceID, id string) error {
	return fmt.Errorf("%s %s in workspace %s: %w", what, id, workspaceID, forkengine.ErrNotFound)
}
