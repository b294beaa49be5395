package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// TestSubmissionTextNeverReachesTheDatabase reports a plain-text submission and then reads the
// SQLite file and its write-ahead log byte by byte: the text is nowhere, only its keyed digest.
func TestSubmissionTextNeverReachesTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := sqliteConfig(t)
	db, err := Open(ctx, cfg)
	require.NoError(t, err)
	engine, err := forkengine.New(forkengine.Config{Store: db, Logger: quietLog, NoBackground: true})
	require.NoError(t, err)
	const text = "needle-5f0c: deploy the payroll service to the staging cluster"
	psid := "p-s1"
	_, err = engine.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "w", ID: "s1", Provider: "simulated", ProviderSessionID: &psid})
	require.NoError(t, err)
	_, err = engine.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "w", SessionID: "s1", ID: "t1",
		Phase: forkengine.PhaseSubmitted, Submission: &forkengine.SubmissionReport{ClientSubmitID: "submit-1",
			Content: forkengine.SubmissionPlainText, Text: ptrTo(text)}})
	require.NoError(t, err)
	sub, err := db.GetSubmission(ctx, "w", "t1")
	require.NoError(t, err)
	require.Equal(t, "submit-1", sub.ClientSubmitID)
	require.Len(t, sub.TextDigest, 64)
	require.NoError(t, engine.Close(ctx))
	require.NoError(t, db.Close())

	files, err := filepath.Glob(cfg.DSN + "*") // the file, and its -wal and -shm if they are left
	require.NoError(t, err)
	require.NotEmpty(t, files)
	found := false
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, piece := range []string{text, "needle-5f0c", "payroll"} {
			require.NotContains(t, string(data), piece, "%s holds the submission text", filepath.Base(f))
		}
		found = found || strings.Contains(string(data), sub.TextDigest)
	}
	require.True(t, found, "the digest is stored")
}

func ptrTo[T any](v T) *T { return &v }
