package store

import (
	"cmp"
	"context"
	"slices"

	"github.com/forkgraph/forkgraph/forkengine"
)

// A fork's prepare reads its source's prefix (forkengine.PrefixReader) in four statements of
// constant size whatever the prefix's length (issue 24), where walking it read every turn of the
// prefix and sent every turn id of it, twice, in an IN list:
//   - the counts: whether the session has a History, its turns (turn_counts), those above the
//     boundary (an index range, empty for a fork through the latest turn) and the id of the last
//     turn at or below it (one backward seek);
//   - the irregular turns of the prefix (not settled, or without a provider binding), read by the
//     partial indexes turns_unsettled and turns_unbound, which hold only them (and the few a Go
//     check then discards);
//   - the interactions of the session, by interactions_by_session, each joined to its turn for
//     the sequence that keeps it in the prefix;
//   - the typed messages of the session, by the partial index messages_typed_by_session, each
//     joined to its turn likewise.
//
// The last two are CROSS JOINs so that SQLite keeps the session's rows as the outer loop (it
// never reorders a CROSS JOIN): on a small table its planner would otherwise walk the prefix's
// turns and probe each one's, the walk this replaces. TestSQLitePageQueriesSeek checks the plans.
//
// It answers for a session without a History (a root, or a fork copied by an earlier version),
// and for a committed fork through any of its turns, adding the typed messages its segments
// present (one more statement). Through an inherited turn (a fork of a child at a turn it shares
// with its parent, at or before the child's boundary) it reads one more: the messages its
// segments present on the shorter side of the boundary (prefixInheritedPartSQL), which are, or
// the History's count less which is, the count through the boundary. Every inherited turn is settled and bound, so the
// irregular turns, interactions and typed messages of such a prefix are the fork's own rows and
// copies, and its segments' typed messages, at or below the boundary: the same statements with
// the boundary. Six statements whatever the prefix's length and the chain's depth
// (TestInheritedPrefixStatements).

// prefixMigration (migration 31) adds the two partial indexes.
var prefixMigration = migration{version: 31, name: "a fork's prefix read in constant time: unbound turns, typed messages by session", statements: []string{
	`CREATE INDEX turns_unbound ON turns (workspace_id, session_id, sequence) WHERE ` + unboundTurn,
	`CREATE INDEX messages_typed_by_session ON messages (workspace_id, session_id, position) WHERE ` + typedMessage,
}}

// interactionOwnerMigration (migration 32) makes the store refuse an interaction whose session
// is not its turn's. ReadPrefix finds a session's interactions by their session column
// (interactions_by_session), where walking the prefix found them by turn and refused one that
// named another session (FORK_CONFLICT interaction_outside_prefix); with the rule kept at the
// write, no such row can be stored for either read to meet, as no two rows of one turn and
// request id can (InteractionsFailClosed). A row whose turn is not stored (an inherited turn's
// presented id) is not checked. The refusal is classified as a missing referenced row
// (forkengine.ErrNotFound): the pair of session and turn it names does not exist.
var interactionOwnerMigration = migration{version: 32, name: "an interaction's session is its turn's", perDialect: map[string][]string{
	"sqlite": {
		`CREATE TRIGGER interactions_owned_by_their_turns_session_insert BEFORE INSERT ON interactions
		WHEN ` + interactionOfAnotherSession + ` BEGIN SELECT RAISE(ABORT, '` + interactionOwnerRefusal + `'); END`,
		`CREATE TRIGGER interactions_owned_by_their_turns_session_update BEFORE UPDATE OF workspace_id, session_id, turn_id ON interactions
		WHEN ` + interactionOfAnotherSession + ` BEGIN SELECT RAISE(ABORT, '` + interactionOwnerRefusal + `'); END`,
	},
	"postgres": {
		`CREATE OR REPLACE FUNCTION forkgraph_interaction_owner() RETURNS trigger AS $$
		BEGIN
			IF ` + interactionOfAnotherSession + ` THEN
				RAISE EXCEPTION '` + interactionOwnerRefusal + `' USING ERRCODE = 'foreign_key_violation';
			END IF;
			RETURN NEW;
		END $$ LANGUAGE plpgsql`,
		`CREATE TRIGGER interactions_owned_by_their_turns_session BEFORE INSERT OR UPDATE OF workspace_id, session_id, turn_id
		ON interactions FOR EACH ROW EXECUTE FUNCTION forkgraph_interaction_owner()`,
	},
}}

// interactionOfAnotherSession holds for a NEW interaction row whose turn is stored under another
// session; interactionOwnerRefusal is the refusal's text.
const (
	interactionOfAnotherSession = `EXISTS (SELECT 1 FROM turns t WHERE t.workspace_id = NEW.workspace_id
		AND t.id = NEW.turn_id AND t.session_id <> NEW.session_id)`
	interactionOwnerRefusal = "an interaction belongs to the session of its turn"
)

// unboundTurn holds every turn without a provider binding (forkengine.Turn.HasProviderBinding):
// a binding is a non-empty JSON object, which starts with "{", ends with "}" and holds a quoted
// key. It also holds the rare bound turn whose binding is spelled with whitespace around it;
// ReadPrefix drops those by the Go check. (A turn left out whose binding is not valid JSON at
// all is one the engine never writes: it refuses such a binding at the report.) The turns not
// settled are turns_unsettled's: one index holding both would also answer, and SQLite would then
// read it, the larger, for every read of a session's unsettled turns.
const unboundTurn = `(provider_turn_id = '' OR provider_turn_id = id OR provider_turn_binding IS NULL ` +
	`OR provider_turn_binding NOT LIKE '{%"%}')`

// prefixCountsSQL reads the session's History (its key, boundary and inherited turns; "", -1
// and 0 without one), its own turns' count, those above the boundary, and its last own turn at
// or below it; then what a child frozen through the boundary would inherit, from the counts the
// writes keep (message_counts.go): the History's prefix turns, whether it has segments and its
// inherited messages, the messages stored under the session's own turns (turn_counts), and those
// of its own turns above the boundary, at or below its History's boundary, and at or below 0
// (each an index range of its turns, empty but for an override or a fork through an earlier
// turn; the one below its History's boundary joined from the History's row, so that
// PostgreSQL plans it as a range of the session's turns from a bound it knows is one row).
// Arguments: the workspace and session four times, then with the boundary twice, then four times, then
// with the boundary, then twice.
var prefixCountsSQL = `SELECT
	COALESCE((SELECT history_key FROM histories WHERE workspace_id = ? AND session_id = ?), ''),
	COALESCE((SELECT boundary FROM histories WHERE workspace_id = ? AND session_id = ?), -1),
	COALESCE((SELECT inherited_turns FROM histories WHERE workspace_id = ? AND session_id = ?), 0),
	COALESCE((SELECT n FROM turn_counts WHERE workspace_id = ? AND session_id = ?), 0),
	(SELECT COUNT(*) FROM turns WHERE workspace_id = ? AND session_id = ? AND sequence > ?),
	COALESCE((SELECT id FROM turns WHERE workspace_id = ? AND session_id = ? AND sequence <= ? ORDER BY sequence DESC LIMIT 1), ''),
	COALESCE((SELECT prefix_turns FROM histories WHERE workspace_id = ? AND session_id = ?), 0),
	CASE WHEN EXISTS (SELECT 1 FROM history_segments WHERE workspace_id = ? AND session_id = ?) THEN 1 ELSE 0 END,
	COALESCE((SELECT inherited_messages FROM histories WHERE workspace_id = ? AND session_id = ?), 0),
	COALESCE((SELECT messages FROM turn_counts WHERE workspace_id = ? AND session_id = ?), 0),
	` + ownMessagesOfTurns("t.sequence > ?") + `,
	(SELECT CAST(COALESCE(SUM((SELECT c.n FROM message_counts c WHERE c.workspace_id = t.workspace_id AND c.turn_id = t.id)), 0) AS BIGINT)
	FROM histories h JOIN turns t ON t.workspace_id = h.workspace_id AND t.session_id = h.session_id AND t.sequence <= h.boundary
	WHERE h.workspace_id = ? AND h.session_id = ?),
	` + ownMessagesOfTurns("t.sequence <= 0")

// ownMessagesOfTurns sums the kept message counts of the session's turns whose sequence meets
// cond (an index range of turns_sequence_per_session, each turn's count one primary-key probe:
// a correlated probe, so that PostgreSQL never hashes the workspace's counts for a range whose
// bound it does not know when it plans).
// Arguments: the workspace and session, then cond's.
func ownMessagesOfTurns(cond string) string {
	return `(SELECT CAST(COALESCE(SUM((SELECT c.n FROM message_counts c WHERE c.workspace_id = t.workspace_id AND c.turn_id = t.id)), 0) AS BIGINT)
	FROM turns t WHERE t.workspace_id = ? AND t.session_id = ? AND ` + cond + `)`
}

var (
	prefixIrregularSQL = "SELECT " + turnsTable.listAfterWorkspace("") + " FROM turns WHERE workspace_id = ? AND session_id = ? " +
		"AND sequence <= ? AND phase <> 'settled' UNION ALL SELECT " + turnsTable.listAfterWorkspace("") +
		" FROM turns WHERE workspace_id = ? AND session_id = ? AND sequence <= ? AND " + unboundTurn
	// The session's interactions, each with its turn's sequence when the turn is a row of the
	// session's own (0 for one of an inherited turn, named by its presented id).
	prefixInteractionsSQL = "SELECT COALESCE(t.sequence, 0), " + interactionsTable.listAfterWorkspace("i.") + ` FROM interactions i
	LEFT JOIN turns t ON t.workspace_id = i.workspace_id AND t.id = i.turn_id AND t.session_id = i.session_id
	WHERE i.workspace_id = ? AND i.session_id = ? ORDER BY i.created_at_us, i.id`
	prefixTypedMessagesSQL = "SELECT t.sequence, " + qualifiedMessagesOfWorkspace + ` FROM messages m
	CROSS JOIN turns t WHERE t.workspace_id = m.workspace_id AND t.id = m.turn_id
	AND m.workspace_id = ? AND m.session_id = ? AND m.` + typedMessage + ` AND t.session_id = ? AND t.sequence <= ?`
	// The typed messages a fork reads through its segments: of each segment's owner, those of
	// the owner's turns in the segment's range up to its watermark, as a transcript read finds
	// them (messagesOfTurnsSQL: every segment over a sequence contributes).
	prefixInheritedTypedSQL = "SELECT t.sequence, g.via, " + qualifiedMessagesOfWorkspace + ` FROM history_segments g
	CROSS JOIN messages m CROSS JOIN turns t
	WHERE g.workspace_id = ? AND g.session_id = ? AND m.workspace_id = g.owner_workspace_id AND m.session_id = g.owner_session_id
	AND m.` + typedMessage + ` AND m.position <= g.watermark AND t.workspace_id = m.workspace_id AND t.id = m.turn_id
	AND t.sequence > g.from_sequence AND t.sequence <= g.to_sequence AND t.sequence <= ?`
)

// prefixInheritedPartSQL counts the messages a fork's segments present in its inherited turns
// below (at or below) a boundary at or below its History's, or above it: per segment reaching
// that side of it, per owner turn of the segment on that side, as inheritedMessagesOf counts
// them. Below is what a child frozen through the boundary inherits through the segments
// (childSegments cuts every segment at the boundary); above is what it does not of the History's
// count. ReadPrefix asks for the shorter side: an index range of the segments
// (history_segments_by_range) and of each one's owner turns on that side, each turn's count one
// primary-key probe (a correlated probe, and on PostgreSQL a LATERAL seek of the turns per
// segment, so that its planner never hashes a workspace's turns or counts for a range whose
// bound it does not know): at most half the History's prefix, empty for a fork through the
// History's boundary. Arguments: the workspace and session, the boundary twice.
func prefixInheritedPartSQL(d dialect, below bool) string {
	return prefixInheritedPart[[2]bool{d.lateralJoins, below}]
}

var prefixInheritedPart = map[[2]bool]string{}

func init() {
	for _, lateral := range []bool{false, true} {
		for _, below := range []bool{false, true} {
			prefixInheritedPart[[2]bool{lateral, below}] = buildPrefixInheritedPartSQL(dialect{lateralJoins: lateral}, below)
		}
	}
}

func buildPrefixInheritedPartSQL(d dialect, below bool) string {
	// Each range bounded by one lower and one upper bound (SQLite seeks one of each, and with two
	// upper bounds it took the segment's and filtered the whole segment's turns by the other).
	segment := "g.to_sequence > ?"
	turns := "t.sequence > " + greatest(d, "g.from_sequence", "?") + " AND t.sequence <= g.to_sequence"
	if below {
		segment = "g.from_sequence < ?"
		turns = "t.sequence > g.from_sequence AND t.sequence <= " + least(d, "g.to_sequence", "?")
	}
	segments := `(SELECT g.owner_workspace_id, g.owner_session_id, g.from_sequence, g.to_sequence, g.watermark
	FROM history_segments g WHERE g.workspace_id = ? AND g.session_id = ? AND ` + segment + `) g`
	return `SELECT CAST(COALESCE(SUM((SELECT CASE WHEN c.last_position <= g.watermark THEN c.n ELSE (
		SELECT COUNT(*) FROM messages m WHERE m.workspace_id = g.owner_workspace_id AND m.turn_id = t.id AND m.position <= g.watermark) END
	FROM message_counts c WHERE c.workspace_id = t.workspace_id AND c.turn_id = t.id)), 0) AS BIGINT) ` +
		seekChain(d, segments, joinStep{"turns", "t", "t.workspace_id = g.owner_workspace_id AND t.session_id = g.owner_session_id AND " + turns})
}

// ReadPrefix reads the Prefix of a root, or of a committed fork through any of its turns. Every
// inherited turn of a fork is settled and bound: a prefix turn that was not when the fork was
// frozen is a row of the fork's own (an override, under its presented id), as is an inherited
// turn the fork appended messages to (adopted). ok is false only for a fork whose inherited
// prefix is not the dense run of sequences 1…boundary every commit writes (the caller walks it).
func (q queries) ReadPrefix(ctx context.Context, ws, sessionID string, through int64) (forkengine.Prefix, bool, error) {
	var key, last string
	var boundary, inherited, turns, above, prefixTurns, segments, inheritedMessages, own, ownAbove, ownBelowBoundary, ownBelowZero int64
	err := scanEach(ctx, q, prefixCountsSQL, []any{ws, sessionID, ws, sessionID, ws, sessionID, ws, sessionID,
		ws, sessionID, through, ws, sessionID, through, ws, sessionID, ws, sessionID, ws, sessionID, ws, sessionID,
		ws, sessionID, through, ws, sessionID, ws, sessionID},
		[]any{textScan[string]{&key}, &boundary, &inherited, &turns, &above, textScan[string]{&last},
			&prefixTurns, &segments, &inheritedMessages, &own, &ownAbove, &ownBelowBoundary, &ownBelowZero}, func() {})
	if err != nil {
		return forkengine.Prefix{}, false, classify(err, "prefix counts of %s", sessionID)
	}
	fork := key != ""
	throughInherited := fork && through <= boundary
	if throughInherited && boundary != prefixTurns {
		return forkengine.Prefix{}, false, nil // not the dense prefix the turn count below assumes
	}
	p := forkengine.Prefix{Turns: int(turns + inherited - above), Last: last}
	if throughInherited {
		// Sequences 1…boundary are the prefix's, each presented under its presented id whether
		// inherited or a row of the fork's own (an override or an adopted turn).
		p = forkengine.Prefix{Turns: int(through), Last: forkengine.PresentedTurnID(key, through)}
	}
	if p.Turns <= 0 {
		return forkengine.Prefix{Turns: 0, Counted: true}, true, nil
	}
	// What the child's segments present (forkengine's childSegments): every segment of the
	// session's History whole (each starts below its boundary, under the one read through here),
	// whose messages the History counted at its commit and which never change; then the session's
	// own turns from its boundary (from 0 when it has none, or holds rows of its own below it) up
	// to here, every message of which is at or below the watermark frozen with them.
	ownBelow := ownBelowZero
	if segments > 0 && inherited >= prefixTurns {
		ownBelow = ownBelowBoundary
	}
	if throughInherited {
		// Through an inherited turn the segments are cut there, and the session's own rows from
		// 0 up to it count (an empty range but for overrides and adopted turns): what its
		// segments present at or below the boundary, or the History's count less what they
		// present above it, whichever range is the shorter.
		below := 2*through <= boundary
		var part int64
		err = scanEach(ctx, q, prefixInheritedPartSQL(q.dialect, below), []any{ws, sessionID, through, through}, []any{&part}, func() {})
		if err != nil {
			return forkengine.Prefix{}, false, classify(err, "inherited messages of %s through %d", sessionID, through)
		}
		if below {
			inheritedMessages = part
		} else {
			inheritedMessages -= part
		}
		ownBelow = ownBelowZero
	}
	p.InheritedMessages, p.Counted = inheritedMessages+own-ownAbove-ownBelow, true
	err = eachOfWorkspace(ctx, q, turnsTable, ws, prefixIrregularSQL, []any{ws, sessionID, through, ws, sessionID, through}, func(t *forkengine.Turn) {
		if !t.Settled() || !t.HasProviderBinding() {
			p.Irregular = append(p.Irregular, *t)
		}
	})
	if err != nil {
		return forkengine.Prefix{}, false, classify(err, "irregular turns of %s", sessionID)
	}
	// Sorted here, not by the statement: an ORDER BY makes SQLite read both parts in sequence
	// order, a walk of the session's turns. A turn both unsettled and unbound came twice.
	slices.SortFunc(p.Irregular, func(a, b forkengine.Turn) int { return cmp.Compare(a.Sequence, b.Sequence) })
	p.Irregular = slices.CompactFunc(p.Irregular, func(a, b forkengine.Turn) bool { return a.Sequence == b.Sequence })
	var seq int64
	i := forkengine.Interaction{WorkspaceID: ws}
	err = scanEach(ctx, q, prefixInteractionsSQL, []any{ws, sessionID}, append([]any{&seq}, interactionsTable.targets(&i)[1:]...), func() {
		if seq == 0 && fork { // a copy the fork holds of an inherited turn's interaction
			if k, s, ok := forkengine.ParsePresentedTurnID(i.TurnID); ok && k == key && s <= boundary {
				seq = s
			}
		}
		if seq > 0 && seq <= through {
			p.Interactions = append(p.Interactions, forkengine.FrozenInteraction{Sequence: seq, Interaction: i.Clone()})
		}
	})
	if err != nil {
		return forkengine.Prefix{}, false, classify(err, "interactions of the prefix of %s", sessionID)
	}
	// In turn order, each turn's in (CreatedAt, ID) order as read.
	slices.SortStableFunc(p.Interactions, func(a, b forkengine.FrozenInteraction) int { return cmp.Compare(a.Sequence, b.Sequence) })
	var typed []sequenced
	m := forkengine.Message{WorkspaceID: ws}
	err = scanEach(ctx, q, prefixTypedMessagesSQL, []any{ws, sessionID, sessionID, through}, append([]any{&seq}, messagesTable.targets(&m)[1:]...), func() {
		if m.Parts != nil {
			typed = append(typed, sequenced{seq, m})
		}
	})
	if err != nil {
		return forkengine.Prefix{}, false, classify(err, "typed messages of the prefix of %s", sessionID)
	}
	if fork {
		h := forkengine.History{WorkspaceID: ws, SessionID: sessionID, Key: key}
		var via string
		err = scanEach(ctx, q, prefixInheritedTypedSQL, []any{ws, sessionID, through}, append([]any{&seq, &via}, messagesTable.targets(&m)[1:]...), func() {
			if m.Parts != nil {
				typed = append(typed, sequenced{seq, forkengine.PresentMessage(h, decodeVia(via), seq, m)})
			}
		})
		if err != nil {
			return forkengine.Prefix{}, false, classify(err, "inherited typed messages of the prefix of %s", sessionID)
		}
	}
	slices.SortFunc(typed, func(a, b sequenced) int {
		return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.m.Position, b.m.Position))
	})
	for _, t := range typed {
		p.TypedMessages = append(p.TypedMessages, t.m)
	}
	return p, true, nil
}

// sequenced is a message and its turn's sequence.
type sequenced struct {
	seq int64
	m   forkengine.Message
}

var _ forkengine.PrefixReader = queries{}
var _ forkengine.PrefixReader = (*txn)(nil)
