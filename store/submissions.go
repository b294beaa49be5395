package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// submissionsDDL keeps what a runtime reported it submitted for a turn: the proof binding
// recovery uses (migration 16). Never the text: text_digest is its keyed digest.
const submissionsDDL = `CREATE TABLE turn_submissions (
	workspace_id     TEXT   NOT NULL,
	turn_id          TEXT   NOT NULL,
	session_id       TEXT   NOT NULL,
	client_submit_id TEXT   NOT NULL,
	content          TEXT   NOT NULL,
	text_digest      TEXT   NOT NULL,
	recorded_at_us   BIGINT NOT NULL,
	PRIMARY KEY (workspace_id, turn_id),
	FOREIGN KEY (workspace_id, turn_id) REFERENCES turns (workspace_id, id)
)`

// serverKeysDDL keeps keys every instance must agree on, such as the one submission digests
// derive from (migration 16).
const serverKeysDDL = `CREATE TABLE server_keys (
	name    TEXT NOT NULL PRIMARY KEY,
	key_hex TEXT NOT NULL
)`

var (
	// submissionReads are what a read by the key does not know already.
	submissionReads     = submissionsTable.without("workspace_id", "turn_id")
	getSubmissionSQL    = submissionReads.selectSQL() + " WHERE workspace_id = ? AND turn_id = ?"
	insertSubmissionSQL = submissionsTable.insertOneSQL()
	// claimServerKeySQL inserts the key or, when one is stored, rewrites nothing of it, and
	// returns the stored key either way: DO UPDATE rather than DO NOTHING because only an
	// updated row is RETURNed, so a claim that loses to a concurrent one waits for it and reads
	// its key, under READ COMMITTED too.
	claimServerKeySQL = serverKeysTable.insertOneSQL() + serverKeysTable.onConflictKeep("key_hex") + " RETURNING key_hex"
)

// GetSubmission returns the submission recorded for a turn, or ErrNotFound.
func (q queries) GetSubmission(ctx context.Context, ws, turnID string) (forkengine.Submission, error) {
	q.statements.Add(1)
	sub := forkengine.Submission{WorkspaceID: ws, TurnID: turnID}
	err := q.db.Statement.ConnPool.QueryRowContext(ctx, q.dialect.placeholders(getSubmissionSQL), ws, turnID).
		Scan(submissionReads.targets(&sub)...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return forkengine.Submission{}, notFound("submission of turn", ws, turnID)
	case err != nil:
		return forkengine.Submission{}, classify(err, "get submission of turn %s", turnID)
	}
	return sub, nil
}

// InsertSubmission records a turn's submission. ErrDuplicate when the turn has one, ErrNotFound
// when the turn does not exist (its foreign key).
func (tx *txn) InsertSubmission(ctx context.Context, s forkengine.Submission) error {
	return tx.guarded(ctx, func(db *gorm.DB) error {
		_, err := tx.execFixed(db, insertSubmissionSQL, submissionsTable.values(&s)...)
		return classify(err, "insert submission of turn %s", s.TurnID)
	})
}

// ClaimServerKey stores candidate under name unless a key is stored there, and returns the
// stored key.
func (tx *txn) ClaimServerKey(ctx context.Context, name string, candidate []byte) ([]byte, error) {
	if len(candidate) == 0 {
		return nil, fmt.Errorf("claim server key %s: empty candidate", name)
	}
	tx.statements.Add(1)
	var stored string
	err := tx.with(ctx).Statement.ConnPool.QueryRowContext(ctx, tx.dialect.placeholders(claimServerKeySQL),
		serverKeysTable.values(&serverKeyRow{name, hex.EncodeToString(candidate)})...).Scan(&stored)
	if err != nil {
		return nil, classify(err, "claim server key %s", name)
	}
	key, err := hex.DecodeString(stored)
	if err != nil {
		return nil, fmt.Errorf("server key %s is not hex: %w", name, err)
	}
	return key, nil
}
