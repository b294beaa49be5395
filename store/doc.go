// Package store persists the forkgraph domain with gorm: a forkengine.Store on SQLite (the
// default, one WAL-mode file) or PostgreSQL.
//
// The schema is created by versioned SQL migrations (migrations.go), never by AutoMigrate, so
// what runs in production is exactly what was reviewed. The rules the engine relies on under
// races (one operation per request id, one active operation per boundary, one reservation per
// target id) are unique indexes, not application checks.
//
// Writers are serialised: Update holds a process-wide mutex, and the database lock (SQLite's
// BEGIN IMMEDIATE, a PostgreSQL transaction-scoped advisory lock) serialises writers of other
// processes sharing the database. Event cursors are therefore handed out in commit order.
//
// Times are stored as microseconds since the Unix epoch (BIGINT), which round-trips exactly at
// the engine's precision, in UTC, and sorts the same way on every dialect.
package store
