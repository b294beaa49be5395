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
// # Each table described once
//
// A table is one description (table.go, rows.go): its name, its key and, per column, the SQL
// name, the field of the domain value it holds (forkengine.Session, Turn, Message, Lineage, Event,
// ForkOperation) and its encoding (text, integer, boolean, microseconds, optional microseconds,
// raw JSON, a JSON object, or an encoding of its own such as an operation's frozen target). Column lists, insert and upsert statements, bound values and scan targets are all
// derived from it, and rows are scanned straight into domain values: a column is spelled once in
// Go, beside its migration. Reads and writes of these tables are fixed SQL run through
// database/sql (statements.go, fixed_reads.go), never gorm's builder: one way to read, and on a
// fork's small indexed statements gorm's builder and reflective scanner cost more than SQLite
// itself. gorm keeps the connection pool, transactions and migrations, and runs the few
// statements outside the described tables (migrations, pragmas, locks).
//
// An operation's snapshot lives in a table of its own, written once at insert and never by a
// status change, and decoded snapshots are cached per operation. New snapshots are stored in one
// encoding per dialect (binary on SQLite, compact JSON on PostgreSQL; encoding/json of the
// snapshot when that encoding cannot hold it exactly, a reference to shared history among them);
// the decoders of every older encoding stay (snapshot_encoding.go). docs/design/shared-history.md describes
// what replaces the copied transcript (issue 24).
//
// Times are stored as microseconds since the Unix epoch (BIGINT), which round-trips exactly at
// the engine's precision, in UTC, and sorts the same way on every dialect.
package store
