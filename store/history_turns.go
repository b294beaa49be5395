package store

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"

	"github.com/forkgraph/forkgraph/forkengine"
)

// A session's turns are its own rows and, for a committed fork, the rows its History's
// segments read (docs/design/shared-history.md §5.1). Every per-session turn read is one
// statement of two parts joined by UNION ALL:
//
//   - the session's own rows, read exactly as a root's always were (pagedTurnsSQL's seek, the
//     rowid plan of the latest turn), so a root pays for its history one probe of an empty
//     index range and nothing else;
//   - the inherited rows of the segments that overlap the page's window of sequences, and only
//     those: a session's sequences are 1, 2, 3… without gaps as its reads present them (the
//     engine gives a new turn the last sequence plus one, and a fork's prefix is its source's
//     first turns), so a page of n turns after sequence a is the sequences a+1…a+n, and a
//     segment outside them is never sought. A page in the middle of a history fifty forks deep
//     seeks one or two segments, not fifty.
//
// Go merges the two (mergeTurnSpans) for a session that has inherited rows: at a shared
// sequence the session's own row wins, then the segment of the highest ordinal.

// ownOrdinal is the ordinal of a session's own rows: above every segment's.
const ownOrdinal = math.MaxInt32

// spanHeadOwn and spanHeadInherited are what each part selects before the turn's columns (every
// one but workspace_id, as eachOfWorkspace reads them): the precedence of the row's span, and for
// an inherited row the history key that presents it. An own row leaves the key NULL: the driver
// copies out every string it returns, which on a page of a hundred latest turns was a sixth of
// the read. inheritedTurnColumns are the turn's columns as the inherited part selects them: the
// session the row is read for in the session's place, and no id, since PresentTurn gives the row
// the child's id and session (the owner's id and session were two strings a row copied out for
// nothing).
const (
	spanHeadOwn       = "2147483647, CAST(NULL AS TEXT), "
	spanHeadInherited = "g.ordinal, g.history_key, "
)

var inheritedTurnColumns = func() string {
	rest, ok := strings.CutPrefix(qualifiedTurnsOfWorkspace, "t.id, t.session_id, ")
	if !ok {
		panic("store: the turns' columns no longer start with id and session_id")
	}
	return "'', g.session_id, " + rest
}()

// segmentsOf joins, per id of the ids CTE, the session's segments that cond keeps (on alias g)
// and then, per segment, the owner's turns that turnCond keeps (on alias t): one seek of the
// segments' key per id and one of the turns' index per segment kept.
func segmentsOf(d dialect, cond, turnCond string) string {
	owner := "t.workspace_id = g.owner_workspace_id AND t.session_id = g.owner_session_id AND " + turnCond
	if d.lateralJoins {
		return "FROM ids " + seekPerRow(d, "history_segments", "g", "g.workspace_id = ? AND g.session_id = ids.id AND "+cond) +
			" " + seekPerRow(d, "turns", "t", owner) + " WHERE " + anyHistorySQL
	}
	return "FROM ids CROSS JOIN history_segments g CROSS JOIN turns t WHERE g.workspace_id = ? AND g.session_id = ids.id AND " +
		cond + " AND " + owner + " AND " + anyHistorySQL
}

// anyHistorySQL ends the inherited part of a read: the workspace has a committed fork at all.
// It names no table of the join: PostgreSQL makes it a one-time filter, evaluated before the
// join; on SQLite spanRead makes it the join's first table, for the same effect. In a workspace
// without forks the inherited part costs one probe, not one per session. Its argument, the
// workspace, comes last.
const anyHistorySQL = "EXISTS (SELECT 1 FROM histories x WHERE x.workspace_id = ?)"

// seekPerRow joins table (aliased alias) to the rows before it by cond, which must seek an
// index once per such row. SQLite keeps a CROSS JOIN in the order written; PostgreSQL reorders a
// join by its estimates (a segments table it believes small it would walk whole for the
// workspace), so there it is a LATERAL subquery that OFFSET 0 keeps from being flattened. The
// SQLite form ends in a WHERE holding cond.
func seekPerRow(d dialect, table, alias, cond string) string {
	if d.lateralJoins {
		return "CROSS JOIN LATERAL (SELECT * FROM " + table + " " + alias + " WHERE " + cond + " OFFSET 0) " + alias
	}
	return "CROSS JOIN " + table + " " + alias + " WHERE " + cond
}

// param is a parameter typed as a sequence, so PostgreSQL compares it as one.
func param(d dialect) string {
	if d.lateralJoins {
		return "CAST(? AS BIGINT)"
	}
	return "?"
}

// greatest and least are the dialect's max and min of their arguments.
func greatest(d dialect, args ...string) string { return scalar(d, "GREATEST", "MAX", args) }

func least(d dialect, args ...string) string { return scalar(d, "LEAST", "MIN", args) }

func scalar(d dialect, postgres, sqlite string, args []string) string {
	name := sqlite
	if d.lateralJoins {
		name = postgres
	}
	out := name + "("
	for i, a := range args {
		if i > 0 {
			out += ", "
		}
		out += a
	}
	return out + ")"
}

// turnsAfterSQL reads, per id, the turns with sequence > a of the window a+1…hi: the session's
// own rows (up to n of them after a, n <= 0: every one) and the inherited rows of the segments
// overlapping the window. Arguments: turnsAfterArgs.
func turnsAfterSQL(d dialect, ids, n int) string {
	var own string
	switch {
	case d.lateralJoins:
		limit := ""
		if n > 0 {
			limit = " LIMIT ?"
		}
		own = "FROM ids CROSS JOIN LATERAL (SELECT * FROM turns t WHERE t.workspace_id = ? AND t.session_id = ids.id AND t.sequence > ?" +
			" ORDER BY t.sequence" + limit + ") t"
	case n > 0:
		own = `FROM ids CROSS JOIN turns t WHERE t.workspace_id = ? AND t.session_id = ids.id AND t.sequence > ? AND t.sequence <= COALESCE((
		SELECT m.sequence FROM turns m WHERE m.workspace_id = ? AND m.session_id = ids.id AND m.sequence > ?
		ORDER BY m.sequence LIMIT 1 OFFSET ?), ?)`
	default:
		own = "FROM ids CROSS JOIN turns t WHERE t.workspace_id = ? AND t.session_id = ids.id AND t.sequence > ?"
	}
	p := param(d)
	return spanRead(d, ids, own, segmentsOf(d, "g.to_sequence > "+p+" AND g.from_sequence < "+p,
		"t.sequence > "+greatest(d, p, "g.from_sequence")+" AND t.sequence <= "+least(d, p, "g.to_sequence")))
}

func turnsAfterArgs(d dialect, ids []string, ws string, a int64, n int) []any {
	hi := windowEnd(a, n)
	var own []any
	switch {
	case d.lateralJoins && n > 0:
		own = []any{ws, a, n}
	case n > 0:
		own = []any{ws, a, ws, a, n - 1, maxSequence}
	default:
		own = []any{ws, a}
	}
	return spanArgs(d, ids, own, []any{ws, a, hi, a, hi, ws})
}

// windowEnd is the last sequence of a page of n after a (n <= 0: the session's end).
func windowEnd(a int64, n int) int64 {
	if n <= 0 || a > maxSequence-int64(n) {
		return maxSequence
	}
	return a + int64(n)
}

// turnsBeforeSQL reads, per id, the turns with sequence <= upTo, highest first: the session's
// own rows (up to n of them, n <= 0: every one) and the inherited rows of the segments
// overlapping the window of n sequences that ends at top = min(upTo, the history's boundary):
// the inherited part of the page, whose own rows above the boundary come first. latest reads
// the own row by the rowid plan of lastTurnSQL (n is then 1 and upTo the end). Arguments:
// turnsBeforeArgs.
func turnsBeforeSQL(d dialect, ids, n int, latest bool) string {
	var own string
	switch {
	case latest && d.lateralJoins:
		own = "FROM ids CROSS JOIN LATERAL (SELECT * FROM turns t WHERE t.workspace_id = ? AND t.session_id = ids.id" +
			" ORDER BY t.sequence DESC LIMIT 1) t"
	case latest:
		own = `FROM ids CROSS JOIN turns t WHERE t.rowid = (
		SELECT m.rowid FROM turns m WHERE m.workspace_id = ? AND m.session_id = ids.id ORDER BY m.sequence DESC LIMIT 1)`
	case d.lateralJoins:
		limit := ""
		if n > 0 {
			limit = " LIMIT ?"
		}
		own = "FROM ids CROSS JOIN LATERAL (SELECT * FROM turns t WHERE t.workspace_id = ? AND t.session_id = ids.id AND t.sequence <= ?" +
			" ORDER BY t.sequence DESC" + limit + ") t"
	case n > 0:
		own = `FROM ids CROSS JOIN turns t WHERE t.workspace_id = ? AND t.session_id = ids.id AND t.sequence <= ? AND t.sequence >= COALESCE((
		SELECT m.sequence FROM turns m WHERE m.workspace_id = ? AND m.session_id = ids.id AND m.sequence <= ?
		ORDER BY m.sequence DESC LIMIT 1 OFFSET ?), ?)`
	default:
		own = "FROM ids CROSS JOIN turns t WHERE t.workspace_id = ? AND t.session_id = ids.id AND t.sequence <= ?"
	}
	p := param(d)
	top := least(d, p, "h.boundary")
	history := "h.workspace_id = ? AND h.session_id = ids.id"
	segments := "g.workspace_id = h.workspace_id AND g.session_id = h.session_id AND g.from_sequence < " + top +
		" AND g.to_sequence > " + top + " - " + p
	owner := "t.workspace_id = g.owner_workspace_id AND t.session_id = g.owner_session_id AND t.sequence <= " +
		least(d, p, "h.boundary", "g.to_sequence") + " AND t.sequence > " + greatest(d, top+" - "+p, "g.from_sequence")
	inherited := "FROM ids CROSS JOIN histories h CROSS JOIN history_segments g CROSS JOIN turns t WHERE " +
		history + " AND " + segments + " AND " + owner + " AND " + anyHistorySQL
	if d.lateralJoins {
		inherited = "FROM ids " + seekPerRow(d, "histories", "h", history) + " " + seekPerRow(d, "history_segments", "g", segments) +
			" " + seekPerRow(d, "turns", "t", owner) + " WHERE " + anyHistorySQL
	}
	return spanRead(d, ids, own, inherited)
}

func turnsBeforeArgs(d dialect, ids []string, ws string, upTo int64, n int, latest bool) []any {
	var own []any
	switch {
	case latest:
		own = []any{ws}
	case d.lateralJoins && n > 0:
		own = []any{ws, upTo, n}
	case n > 0:
		own = []any{ws, upTo, ws, upTo, n - 1, int64(math.MinInt64)}
	default:
		own = []any{ws, upTo}
	}
	width := int64(n)
	if n <= 0 {
		width = maxSequence
	}
	return spanArgs(d, ids, own, []any{ws, upTo, upTo, width, upTo, upTo, width, ws})
}

// spanRead is the statement of a span read of n ids whose own and inherited parts each read
// FROM ids. On SQLite each part reads the ids from the bound JSON array itself: a CTE that two
// parts name is materialised, a temporary table built for every statement, which cost a read of
// a hundred latest turns more than its hundred probes of histories. There the inherited part's
// guard (anyHistorySQL, which it ends in) becomes its outermost loop, a one-row subquery: SQLite
// checks a term where its tables are joined, after the ids and the first seek, so as a WHERE
// term it cost a workspace without forks a probe of histories per session and a second parse of
// the id list; as the first table of the join it stops the part before either. Arguments:
// spanArgs.
func spanRead(d dialect, n int, own, inherited string) string {
	head := "SELECT " + spanHeadOwn + qualifiedTurnsOfWorkspace + " "
	rest := "\nUNION ALL\nSELECT " + spanHeadInherited + inheritedTurnColumns + " "
	if d.jsonIDLists {
		const ids = "FROM (SELECT value AS id FROM json_each(?)) ids "
		const guarded = "FROM (SELECT 1 AS one WHERE " + anyHistorySQL + ") guard CROSS JOIN (SELECT value AS id FROM json_each(?)) ids "
		inherited = strings.TrimSuffix(inherited, " AND "+anyHistorySQL)
		return head + strings.Replace(own, "FROM ids ", ids, 1) + rest + strings.Replace(inherited, "FROM ids ", guarded, 1)
	}
	return idsCTE(d, n) + head + own + rest + inherited
}

// spanArgs are the arguments of spanRead: the ids, then the own part's, then the inherited
// part's, whose last is the guard's workspace (on SQLite the guard's workspace and the ids again
// before the rest of them).
func spanArgs(d dialect, ids []string, own, inherited []any) []any {
	if d.jsonIDLists {
		list := idList(ids)
		guard := inherited[len(inherited)-1]
		return append(append(append([]any{list}, own...), guard, list), inherited[:len(inherited)-1]...)
	}
	return idArgs(d, ids, append(own, inherited...)...)
}

// spanRow is one row of a span read: the turn, its span's precedence and the history key that
// presents it when inherited.
type spanRow struct {
	key  string
	ord  int64
	turn forkengine.Turn
}

// sessionSpans are the rows of one session of a span read that has inherited ones: the turns,
// the inherited ones presented where they were read, and beside each its span's precedence.
type sessionSpans struct {
	turns []forkengine.Turn
	ords  []int64
}

// readTurnSpans runs a span read of sessionIDs, chunk by chunk (read builds each chunk's
// statement), and merges each session's rows into out: up to n turns (n <= 0: every one) in
// sequence order, descending when backward. A session's own rows go straight into out, as a
// root's read always put them: only a session with inherited rows is merged (mergeTurnSpans),
// so a root pays nothing in Go for the history it does not have.
func (q queries) readTurnSpans(ctx context.Context, ws string, sessionIDs []string, n int, backward bool,
	read func(chunk []string) (string, []any), out map[string][]forkengine.Turn) error {
	return q.inChunks(sessionIDs, func(chunk []string) error {
		query, args := read(chunk)
		var spans map[string]*sessionSpans
		var r spanRow
		r.turn.WorkspaceID = ws
		targets := append([]any{&r.ord, textScan[string]{&r.key}}, turnsTable.targets(&r.turn)[1:]...)
		err := scanEach(ctx, q, query, args, targets, func() {
			sid := r.turn.SessionID // an inherited row's is the session it is read for (inheritedTurnColumns)
			s := spans[sid]
			if r.ord == ownOrdinal && s == nil {
				out[sid] = append(out[sid], r.turn)
				return
			}
			if s == nil {
				s = &sessionSpans{}
				if n > 0 {
					// A page's rows are about n (a few more where segments overlap): grown by
					// doubling from one, a page of twenty copied its rows five times.
					s.turns, s.ords = make([]forkengine.Turn, 0, 2*n), make([]int64, 0, 2*n)
				}
				if spans == nil {
					spans = map[string]*sessionSpans{}
				}
				spans[sid] = s
			}
			s.turns, s.ords = append(s.turns, r.turn), append(s.ords, r.ord)
			if r.ord != ownOrdinal {
				forkengine.PresentTurnIn(forkengine.History{WorkspaceID: ws, SessionID: sid, Key: r.key}, &s.turns[len(s.turns)-1])
			}
		})
		if err != nil {
			return classify(err, "turns of %d sessions", len(chunk))
		}
		for _, sid := range chunk {
			own, ok := out[sid]
			switch s := spans[sid]; {
			case s != nil:
				// The own rows read before the first inherited one join them.
				for _, t := range own {
					s.turns, s.ords = append(s.turns, t), append(s.ords, ownOrdinal)
				}
				out[sid] = mergeTurnSpans(s, n, backward)
			case ok && !inOrder(own, backward):
				// Each part reads in its index's order; a plan that does not is sorted here.
				slices.SortFunc(own, func(a, b forkengine.Turn) int {
					if backward {
						return cmp.Compare(b.Sequence, a.Sequence)
					}
					return cmp.Compare(a.Sequence, b.Sequence)
				})
			}
			if n > 0 && len(out[sid]) > n {
				out[sid] = out[sid][:n]
			}
		}
		return nil
	})
}

// latestTurnSpans runs a span read of each session's latest row of every span (turnsBeforeSQL
// with latest) and keeps in out each session's highest sequence, at a shared one the span of
// the highest precedence: readTurnSpans without its pages, since a latest turn is one row per
// session and a root's is its own (a page of a hundred latest turns spent more in slices and
// maps than in SQLite).
func (q queries) latestTurnSpans(ctx context.Context, ws, query string, args []any, out map[string]forkengine.Turn) error {
	var inherited map[string]int64 // the ordinal of each session's kept row, when it is inherited
	var r spanRow
	r.turn.WorkspaceID = ws
	targets := append([]any{&r.ord, textScan[string]{&r.key}}, turnsTable.targets(&r.turn)[1:]...)
	err := scanEach(ctx, q, query, args, targets, func() {
		sid := r.turn.SessionID // an inherited row's is the session it is read for (inheritedTurnColumns)
		if kept, ok := out[sid]; ok {
			ord, was := inherited[sid]
			if !was {
				ord = ownOrdinal
			}
			if r.turn.Sequence < kept.Sequence || (r.turn.Sequence == kept.Sequence && r.ord <= ord) {
				return
			}
		}
		if r.ord == ownOrdinal {
			out[sid] = r.turn
			delete(inherited, sid)
			return
		}
		if inherited == nil {
			inherited = map[string]int64{}
		}
		inherited[sid] = r.ord
		out[sid] = forkengine.PresentTurn(forkengine.History{WorkspaceID: ws, SessionID: sid, Key: r.key}, r.turn)
	})
	return classify(err, "latest turns")
}

// inOrder reports whether turns are in sequence order (descending when backward).
func inOrder(turns []forkengine.Turn, backward bool) bool {
	for i := 1; i < len(turns); i++ {
		if (turns[i].Sequence > turns[i-1].Sequence) == backward {
			return false
		}
	}
	return true
}

// mergeTurnSpans orders one session's span rows by sequence, keeps the row of the highest
// precedence at each sequence, and keeps n.
func mergeTurnSpans(s *sessionSpans, n int, backward bool) []forkengine.Turn {
	order := func(i, j int) int {
		c := cmp.Compare(s.turns[i].Sequence, s.turns[j].Sequence)
		if backward {
			c = -c
		}
		if c == 0 {
			c = cmp.Compare(s.ords[j], s.ords[i])
		}
		return c
	}
	// The parts read in their indexes' order, the segments' and the own rows' after them, so a
	// forward page is usually in order already (its own rows follow the inherited ones).
	turns := s.turns
	for i := 1; i < len(turns); i++ {
		if order(i-1, i) > 0 {
			perm := make([]int, len(turns))
			for k := range perm {
				perm[k] = k
			}
			slices.SortFunc(perm, order)
			sorted, ords := make([]forkengine.Turn, len(turns)), make([]int64, len(turns))
			for k, p := range perm {
				sorted[k], ords[k] = turns[p], s.ords[p]
			}
			turns, s.turns, s.ords = sorted, sorted, ords
			break
		}
	}
	kept := 0
	for i := range turns {
		if kept > 0 && turns[kept-1].Sequence == turns[i].Sequence {
			continue // a span of lower precedence at the same sequence
		}
		if n > 0 && kept == n {
			break
		}
		if kept != i {
			turns[kept] = turns[i]
		}
		kept++
	}
	return turns[:kept]
}
