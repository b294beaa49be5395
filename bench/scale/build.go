package main

import (
	"context"
	"fmt"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/store"
)

// The dataset: sessionCount sessions created one millisecond apart; the one at bigIndex ("big")
// has bigTurns turns, every other one smallTurns; each turn has one message. That is 100,000
// sessions and 499,996 turns + 499,996 messages: a million turns and messages.
const (
	workspace    = "scale"
	sessionCount = 100_000
	bigIndex     = 50_000
	bigTurns     = 100_000
	smallTurns   = 4
	// deletedEvery soft-deletes one session in this many, so the default filter has work to do.
	deletedEvery = 100
	// rowsPerTx bounds one build transaction, so no single commit holds the whole dataset.
	rowsPerTx = 5_000
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func sessionID(i int) string { return fmt.Sprintf("s%06d", i) }

func sessionAt(i int) forkengine.Session {
	at := epoch.Add(time.Duration(i) * time.Millisecond)
	s := forkengine.Session{
		WorkspaceID: workspace, ID: sessionID(i), Kind: forkengine.SessionRoot, Provider: "sim",
		ProviderSessionID: "p-" + sessionID(i), Title: "session " + sessionID(i), Visible: true,
		CreatedAt: at, UpdatedAt: at,
	}
	if i%deletedEvery == deletedEvery-1 && i != bigIndex {
		s.DeletedAt = &at
	}
	return s
}

// build writes the dataset through the store's own transactions, rowsPerTx rows at a time, and
// returns how many turns and messages it wrote.
func build(ctx context.Context, db *store.DB) (turns, messages int, err error) {
	for start := 0; start < sessionCount; start += rowsPerTx {
		err := db.Update(ctx, func(tx forkengine.Tx) error {
			for i := start; i < min(start+rowsPerTx, sessionCount); i++ {
				if err := tx.UpsertSession(ctx, sessionAt(i)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, 0, fmt.Errorf("sessions from %d: %w", start, err)
		}
	}
	// Small sessions' turns, rowsPerTx/smallTurns sessions per transaction.
	perTx := rowsPerTx / smallTurns
	for start := 0; start < sessionCount; start += perTx {
		var ts []forkengine.Turn
		for i := start; i < min(start+perTx, sessionCount); i++ {
			if i == bigIndex {
				continue
			}
			for seq := 1; seq <= smallTurns; seq++ {
				ts = append(ts, turnOf(i, seq, seq == smallTurns))
			}
		}
		if err := writeTurns(ctx, db, ts); err != nil {
			return 0, 0, err
		}
		turns += len(ts)
	}
	for start := 1; start <= bigTurns; start += rowsPerTx {
		var ts []forkengine.Turn
		for seq := start; seq < min(start+rowsPerTx, bigTurns+1); seq++ {
			ts = append(ts, turnOf(bigIndex, seq, false))
		}
		if err := writeTurns(ctx, db, ts); err != nil {
			return 0, 0, err
		}
		turns += len(ts)
	}
	return turns, turns, nil
}

// turnOf is turn seq of session i; the last turn of a small session is still running, so the
// active-turn reader has something to find, while the big session's turns are all settled.
func turnOf(i, seq int, running bool) forkengine.Turn {
	at := epoch.Add(time.Duration(i)*time.Millisecond + time.Duration(seq)*time.Microsecond)
	t := forkengine.Turn{
		WorkspaceID: workspace, ID: fmt.Sprintf("%s-t%06d", sessionID(i), seq), SessionID: sessionID(i),
		Sequence: int64(seq), Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted,
		Origin: "provider", StartedAt: at, SettledAt: &at, UpdatedAt: at,
		ProviderTurnID: fmt.Sprintf("pt-%d-%d", i, seq),
	}
	if running {
		t.Phase, t.Outcome, t.SettledAt = forkengine.PhaseRunning, "", nil
	}
	return t
}

// writeTurns inserts the turns and one message per turn in one transaction.
func writeTurns(ctx context.Context, db *store.DB, ts []forkengine.Turn) error {
	msgs := make([]forkengine.Message, len(ts))
	for i, t := range ts {
		msgs[i] = forkengine.Message{
			WorkspaceID: workspace, ID: t.ID + "-m", SessionID: t.SessionID, TurnID: t.ID,
			Role: forkengine.RoleAssistant, Content: "a reply of a few words", CreatedAt: t.StartedAt,
		}
	}
	err := db.Update(ctx, func(tx forkengine.Tx) error {
		if err := tx.InsertTurns(ctx, ts); err != nil {
			return err
		}
		_, err := tx.InsertMessages(ctx, msgs)
		return err
	})
	if err != nil {
		return fmt.Errorf("turns of %s: %w", ts[0].SessionID, err)
	}
	return nil
}
