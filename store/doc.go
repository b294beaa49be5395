// Package store persists the forkgraph domain with gorm: a forkengine.Store on SQLite (the
// default, one WAL-mode file) or PostgreSQL.
//
// The schema is created by versioned SQL migrations (migrations.go), never by AutoMigrate, so
// what runs in production is exactly what was reviewed. The rules the engine relies on under
// races (one operation per request id, one active operation per boundary, one reservation per
// target id) are unique indexes, not application checks.
//
// On SQLite writers are serialised: Update queues for a process-wide mutex (BEGIN IMMEDIATE keeps
// other processes out), and the writes that queued while one ran commit together in one
// transaction, each under a savepoint of its own (write_group.go). On PostgreSQL writers run side
// by side, kept apart by row locks, Tx.Lock and the unique indexes. Event cursors are handed out
// in commit order. On a
// SQLite file the write-ahead log is copied back into the database by a checkpointer of its own,
// beside the writers, never inside a commit (sqlite_checkpoint.go).
//
// The statements a fork runs on every start and commit are fixed SQL executed and scanned through
// database/sql directly (statements.go, fixed_reads.go), not built by gorm: on a fork's small
// indexed reads and writes gorm's builder and reflective scanner cost more than SQLite itself.
// Everything else goes through gorm. An operation's snapshot lives in a table of its own, written
// once at insert and never by a status change, and decoded snapshots are cached per operation.
//
// Times are stored as microseconds since the Unix epoch (BIGINT), which round-trips exactly at
// the engine's precision, in UTC, and sorts the same way on every dialect.
package store
