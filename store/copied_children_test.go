package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// copiedChildVersion is the last schema before shared history (historyMigration, version 15):
// a fork of that time copied its source's turns and messages into the child as rows of its own.
const copiedChildVersion = 14

// Old databases migrate: a child that a forkgraph of schema version 14 forked by copying (its
// own copies of the root's three turns and six messages, under its own ids, and the lineage,
// operation, family count and provider session claim a fork wrote then) reads exactly as it was
// written once the database is opened at the latest version: its turns page, its messages
// (TurnMessagesAfter, MessagesByTurnIDs), its counts, its lineage; it takes a turn of its own; and
// a fork of it, through the engine, presents the copied turns and messages as the grandchild's.
// On SQLite and PostgreSQL.
func TestCopiedChildrenOfOldDatabasesReadUnchangedAfterMigration(t *testing.T) {
	t.Parallel()
	onBothConfigs(t, testCopiedChildAfterMigration)
}

// copiedFamily is a root and the child a version 14 fork copied it into, as that version wrote them.
type copiedFamily struct {
	turns    map[string][]forkengine.Turn    // by session
	messages map[string][]forkengine.Message // by turn
	lineage  forkengine.Lineage
}

func newCopiedFamily() copiedFamily {
	at := func(us int64) time.Time { return fromMicros(1_700_000_000_000_000 + us) }
	f := copiedFamily{turns: map[string][]forkengine.Turn{}, messages: map[string][]forkengine.Message{}}
	position := int64(0)
	for _, session := range []string{"root", "child"} {
		for seq := int64(1); seq <= 3; seq++ {
			id := fmt.Sprintf("%s-t%d", session, seq)
			settled := at(seq*10 + 5)
			turn := forkengine.Turn{WorkspaceID: "ws", SessionID: session, ID: id, Sequence: seq, Phase: forkengine.PhaseSettled,
				Outcome: forkengine.OutcomeCompleted, StartedAt: at(seq * 10), SettledAt: &settled, UpdatedAt: settled,
				ProviderTurnID: fmt.Sprintf("p-%s-t%d", session, seq), ProviderTurnBinding: json.RawMessage(`{"t":1}`)}
			f.turns[session] = append(f.turns[session], turn)
			for i, role := range []forkengine.MessageRole{forkengine.RoleUser, forkengine.RoleAssistant} {
				position++
				f.messages[id] = append(f.messages[id], forkengine.Message{WorkspaceID: "ws", SessionID: session, TurnID: id,
					ID: fmt.Sprintf("%s-m%d.%d", session, seq, i), Position: position, Role: role,
					Content: fmt.Sprintf("%s of turn %d", role, seq), CreatedAt: at(seq*10 + int64(i))})
			}
		}
	}
	f.lineage = forkengine.Lineage{WorkspaceID: "ws", TargetSessionID: "child", OperationID: "op-child", SourceSessionID: "root",
		SourceTurnID: "root-t3", TargetTurnID: "child-t3", ForkedAt: at(100)}
	return f
}

// write stores f in old, a store at copiedChildVersion, with raw statements over that version's
// columns only: this code's writes name columns the old schema lacks, and would share history.
func (f copiedFamily) write(t *testing.T, old *DB) {
	t.Helper()
	ctx := context.Background()
	exec := func(query string, args ...any) { require.NoError(t, old.gorm.Exec(query, args...).Error, query) }
	insert := func(name string, names []string, values []any) {
		exec("INSERT INTO "+name+" ("+strings.Join(names, ", ")+") VALUES (?"+strings.Repeat(", ?", len(names)-1)+")", values...)
	}
	require.NoError(t, old.Update(ctx, func(tx forkengine.Tx) error {
		for i, id := range []string{"root", "child"} {
			s := forkengine.Session{WorkspaceID: "ws", ID: id, Kind: forkengine.SessionRoot, Provider: "scripted",
				ProviderSessionID: "p-" + id, Settings: json.RawMessage(`{}`), Visible: true,
				CreatedAt: fromMicros(int64(i + 1)), UpdatedAt: fromMicros(int64(i + 1))}
			if err := upsertSessionAtVersion(ctx, tx, copiedChildVersion, s); err != nil {
				return err
			}
		}
		return nil
	}))
	messages := messagesTable.without(messagePartsColumn.name)
	for _, session := range []string{"root", "child"} {
		exec(`INSERT INTO provider_sessions (provider, provider_session_id, workspace_id, claimed_at_us) VALUES ('scripted', ?, 'ws', 1)`,
			"p-"+session)
		for _, turn := range f.turns[session] {
			require.NoError(t, old.Update(ctx, func(tx forkengine.Tx) error { return upsertTurnWithoutDetails(ctx, tx, turn) }))
			for _, m := range f.messages[turn.ID] {
				insert(messages.name, messages.names, messages.values(&m))
			}
		}
	}
	exec(`INSERT INTO counters (scope, name, value) VALUES ('ws', 'message_position', 12)`)
	exec(`INSERT INTO fork_operations (workspace_id, id, request_id, request_hash, source_session_id, target_session_id,
		through_turn_id, target_turn_id, source_provider_session_id, source_provider_turn_id, provider, driver_kind,
		driver_version, status, error, target_title, target_provider_session_id, state_binding_mode, receipt, snapshot_hash,
		created_at_us, updated_at_us, activity, holds_target)
		VALUES ('ws', 'op-child', 'r-child', 'h', 'root', 'child', 'root-t3', 'child-t3', 'p-root', 'p-root-t3', 'scripted',
		'scripted', 'v1', 'committed', '', '', 'p-child', 'host_copy', '', 'sh', 90, 100, 0, 1)`)
	exec(`INSERT INTO fork_families (workspace_id, root_session_id, forks) VALUES ('ws', 'root', 1)`)
	insert(lineagesTable.name, lineagesTable.names, lineagesTable.values(&f.lineage))
}

func testCopiedChildAfterMigration(t *testing.T, cfg Config) {
	ctx := context.Background()
	f := newCopiedFamily()
	old := openAtVersion(t, cfg, copiedChildVersion)
	f.write(t, old)
	require.NoError(t, old.Close())

	db := openTest(t, cfg)
	require.Equal(t, len(migrations)-old.migrated, db.migrated, "every later migration ran")
	_, shared, err := db.HistoryOf(ctx, "ws", "child")
	require.NoError(t, err)
	require.False(t, shared, "a copied child has no History: it reads its own rows")
	for _, session := range []string{"child", "root"} {
		requireTranscript(t, db, session, f.turns[session], f.messages)
	}
	lineages, err := db.LineagesByTargetIDs(ctx, "ws", []string{"child", "root"})
	require.NoError(t, err)
	require.Equal(t, map[string]forkengine.Lineage{"child": f.lineage}, lineages)

	e := scriptedEngine(t, db, "migrated")
	op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "ws", SourceSessionID: "child", ThroughTurnID: "child-t3",
		RequestID: "r-grand", TargetSessionID: "grand"})
	require.NoError(t, err)
	op, err = e.ProcessOperation(ctx, "ws", op.ID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
	requireForkOfCopiedChild(t, db, f)

	// The copied child goes on: a turn of its own after the upgrade follows its copies.
	ptid := "p-child-t4"
	_, err = e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "ws", SessionID: "child", ID: "child-t4",
		Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: &ptid, ProviderTurnBinding: []byte(`{"t":1}`)})
	require.NoError(t, err)
	page, err := db.TurnsBySessionIDs(ctx, "ws", []string{"child"}, 0, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"child-t1", "child-t2", "child-t3", "child-t4"}, turnIDs(page["child"]))
	require.Equal(t, int64(4), page["child"][3].Sequence)
}

// requireTranscript requires session's turns page, messages and counts to be turns and their
// messages exactly.
func requireTranscript(t *testing.T, db *DB, session string, turns []forkengine.Turn, messages map[string][]forkengine.Message) {
	t.Helper()
	ctx := context.Background()
	page, err := db.TurnsBySessionIDs(ctx, "ws", []string{session}, 0, 0)
	require.NoError(t, err)
	require.Equal(t, turns, page[session], "turns of %s", session)
	ids := turnIDs(turns)
	want := map[string][]forkengine.Message{}
	total := 0
	for _, id := range ids {
		want[id] = messages[id]
		total += len(messages[id])
	}
	after, err := db.TurnMessagesAfter(ctx, "ws", ids, 0, 100)
	require.NoError(t, err)
	require.Equal(t, want, after, "TurnMessagesAfter of %s", session)
	batch, err := db.MessagesByTurnIDs(ctx, "ws", ids)
	require.NoError(t, err)
	require.Equal(t, want, batch, "MessagesByTurnIDs of %s", session)
	later, err := db.TurnMessagesAfter(ctx, "ws", ids[1:2], messages[ids[1]][0].Position, 100)
	require.NoError(t, err)
	require.Equal(t, map[string][]forkengine.Message{ids[1]: messages[ids[1]][1:]}, later, "after a position, %s", session)
	nTurns, err := db.CountTurnsBySessionIDs(ctx, "ws", []string{session})
	require.NoError(t, err)
	require.Equal(t, map[string]int{session: len(turns)}, nTurns, "turn count of %s", session)
	nMessages, err := db.CountSessionMessages(ctx, "ws", []string{session})
	require.NoError(t, err)
	require.Equal(t, map[string]int{session: total}, nMessages, "message count of %s", session)
}

// requireForkOfCopiedChild requires the grandchild forked from the copied child through its last
// turn to present the child's copies: the same turns (its own ids, the child's provider turns)
// and messages, counted, with a lineage naming the child.
func requireForkOfCopiedChild(t *testing.T, db *DB, f copiedFamily) {
	t.Helper()
	ctx := context.Background()
	page, err := db.TurnsBySessionIDs(ctx, "ws", []string{"grand"}, 0, 0)
	require.NoError(t, err)
	grand := page["grand"]
	require.Len(t, grand, 3)
	want := map[string][]forkengine.Message{}
	for i, turn := range grand {
		copied := f.turns["child"][i]
		require.Equal(t, "grand", turn.SessionID)
		require.Equal(t, copied.Sequence, turn.Sequence)
		require.Equal(t, copied.ProviderTurnID, turn.ProviderTurnID, "turn %d presents the child's turn", i+1)
		require.Equal(t, copied.Phase, turn.Phase)
		require.NotEqual(t, copied.ID, turn.ID)
		for _, m := range f.messages[copied.ID] {
			want[turn.ID] = append(want[turn.ID], forkengine.Message{TurnID: turn.ID, Role: m.Role, Content: m.Content})
		}
	}
	ids := turnIDs(grand)
	for name, read := range map[string]func() (map[string][]forkengine.Message, error){
		"TurnMessagesAfter": func() (map[string][]forkengine.Message, error) { return db.TurnMessagesAfter(ctx, "ws", ids, 0, 100) },
		"MessagesByTurnIDs": func() (map[string][]forkengine.Message, error) { return db.MessagesByTurnIDs(ctx, "ws", ids) },
	} {
		got, err := read()
		require.NoError(t, err)
		texts := map[string][]forkengine.Message{}
		for id, ms := range got {
			for _, m := range ms {
				require.Equal(t, "grand", m.SessionID, "%s: message %s", name, m.ID)
				texts[id] = append(texts[id], forkengine.Message{TurnID: m.TurnID, Role: m.Role, Content: m.Content})
			}
		}
		require.Equal(t, want, texts, "%s of the grandchild", name)
	}
	nTurns, err := db.CountTurnsBySessionIDs(ctx, "ws", []string{"grand"})
	require.NoError(t, err)
	require.Equal(t, map[string]int{"grand": 3}, nTurns)
	nMessages, err := db.CountSessionMessages(ctx, "ws", []string{"grand"})
	require.NoError(t, err)
	require.Equal(t, map[string]int{"grand": 6}, nMessages)
	lineages, err := db.LineagesByTargetIDs(ctx, "ws", []string{"grand"})
	require.NoError(t, err)
	require.Equal(t, "child", lineages["grand"].SourceSessionID)
	require.Equal(t, "child-t3", lineages["grand"].SourceTurnID)
	require.Equal(t, grand[2].ID, lineages["grand"].TargetTurnID)
}

func turnIDs(turns []forkengine.Turn) []string {
	ids := make([]string, len(turns))
	for i, turn := range turns {
		ids[i] = turn.ID
	}
	return ids
}
