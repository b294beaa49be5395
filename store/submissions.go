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

// submissionsTable keeps what a runtime reported it submitted for a turn: the proof binding
// recovery uses (migration 16). Never the text: text_digest is its keyed digest.
const submissionsTable = `CREATE TABLE turn_submissions (
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

// serverKeysTable keeps keys every instance must agree on, such as the one submission digests
// derive from (migration 16).
const serverKeysTable = `CREATE TABLE server_keys (
	name    TEXT NOT NULL PRIMARY KEY,
	key_hex TEXT NOT NULL
)`

const (
	getSubmissionSQL = `SELECT session_id, client_submit_id, content, text_digest, recorded_at_us
		FROM turn_submissions WHERE workspace_id = ? AND turn_id = ?`
	insertSubmissionSQL = `INSERT INTO turn_submissions (workspace_id, turn_id, session_id, client_submit_id,
		content, text_digest, recorded_at_us) VALUES (?, ?, ?, ?, ?, ?, ?)`
	// claimServerKeySQL inserts the key or, when one is stored, rewrites nothing of it, and
	// returns the stored key either way: DO UPDATE rather than DO NOTHING because only an
	// updated row is RETURNed, so a claim that loses to a concurrent one waits for it and reads
	// its key, under READ COMMITTED too.
	claimServerKeySQL = `INSERT INTO server_keys (name, key_hex) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET key_hex = server_keys.key_hex RETURNING key_hex`
)

// GetSubmission returns the submission recorded for a turn, or ErrNotFound.
func (q queries) GetSubmission(ctx context.Context, ws, turnID string) (forkengine.Submission, error) {
	q.statements.Add(1)
	sub := forkengine.Submission{WorkspaceID: ws, TurnID: turnID}
	var content string
	var recordedUs int64
	err := q.db.Statement.ConnPool.QueryRowContext(ctx, q.dialect.placeholders(getSubmissionSQL), ws, turnID).
		Scan(&sub.SessionID, &sub.ClientSubmitID, &content, &sub.TextDigest, &recordedUs)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return forkengine.Submission{}, notFound("submission of turn", ws, turnID)
	case err != nil:
		return forkengine.Submission{}, classify(err, "get submission of turn %s", turnID)
	}
	sub.Content, sub.RecordedAt = forkengine.SubmissionContent(content), fromMicros(recordedUs)
	return sub, nil
}

// InsertSubmission records a turn's submission. ErrDuplicate when the turn has one, ErrNotFound
// when the turn does not exist (its foreign key).
func (tx *txn) InsertSubmission(ctx context.Context, s forkengine.Submission) error {
	return tx.guarded(ctx, func(db *gorm.DB) error {
		_, err := tx.execFixed(db, insertSubmissionSQL, s.WorkspaceID, s.TurnID, s.SessionID, s.ClientSubmitID,
			string(s.Content), s.TextDigest, micros(s.RecordedAt))
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
		name, hex.EncodeToString(candidate)).Scan(&stored)
	if err != nil {
		return nil, classify(err, "claim server key %s", name)
	}
	key, err := hex.DecodeString(stored)
	if err != nil {
		return nil, fmt.Errorf("server key %s is not hex: %w", name, err)
	}
	return key, nil
}
