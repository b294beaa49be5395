package forkengine

import (
	"context"
	"fmt"
)

// What a fork's prepare reads of its source's prefix (the turns with a sequence up to the
// boundary's, inherited ones included) is a Prefix: the snapshot needs the prefix's turn counts
// and the few turns the child holds rows of its own for, its interactions (frozen, copied at
// commit) and its typed messages (checked for references the child could not map). A store that
// is a PrefixReader reads them in a constant number of statements whatever the prefix's length
// (issue 24); any other is walked turn by turn (WalkPrefix), which is also what a PrefixReader
// must agree with (the store contract suite compares the two).

// Prefix is what freezeSnapshot reads of a prefix.
type Prefix struct {
	// Turns counts the prefix's turns; Last is the id of its last one, as the source presents it.
	Turns int
	Last  string
	// Irregular are the prefix's turns that are not settled or have no provider binding, in
	// sequence order, as the source presents them: the snapshot's overrides. Every other turn of
	// the prefix is settled and bound.
	Irregular []Turn
	// Interactions are the prefix turns' interactions in turn sequence order, then as each turn
	// holds them ((CreatedAt, ID) order), each with its turn's sequence; nil when none.
	Interactions []FrozenInteraction
	// TypedMessages are the prefix's messages holding typed parts in turn sequence, then position
	// order, as the source presents them; nil when none.
	TypedMessages []Message
	// InheritedMessages is what a child frozen now through the last turn of the prefix
	// inherits through its segments (childSegments): the messages History.InheritedMessages
	// counts, read from the counts the writes keep instead of summed over the prefix's turns at
	// the commit, when Counted.
	InheritedMessages int64
	// Counted says the store counted InheritedMessages (ReadPrefix does, 0 included); WalkPrefix
	// does not, and the commit counts them then.
	Counted bool
}

// PrefixReader is an optional Reader that reads a Prefix without walking the prefix's turns.
type PrefixReader interface {
	// ReadPrefix returns the Prefix of session's turns with Sequence <= through, equal to
	// WalkPrefix's. ok is false when the store cannot read this one without a walk (the caller
	// walks it then).
	ReadPrefix(ctx context.Context, workspaceID, sessionID string, through int64) (p Prefix, ok bool, err error)
}

// readPrefix is the store's ReadPrefix when it has one that answers, else WalkPrefix.
func readPrefix(ctx context.Context, r Reader, ws, sessionID string, through int64) (Prefix, error) {
	if pr, ok := r.(PrefixReader); ok {
		p, ok, err := pr.ReadPrefix(ctx, ws, sessionID, through)
		if err != nil {
			return Prefix{}, fmt.Errorf("read the prefix of %s through %d: %w", sessionID, through, err)
		}
		if ok {
			return p, nil
		}
	}
	return WalkPrefix(ctx, r, ws, sessionID, through)
}

// WalkPrefix reads the Prefix of session's turns through sequence through from the turns
// themselves: every turn of the prefix (one statement), their interactions and their typed
// messages (a statement per chunk of turn ids each). Its cost grows with the prefix's length.
func WalkPrefix(ctx context.Context, r Reader, ws, sessionID string, through int64) (Prefix, error) {
	turns, err := r.TurnsThrough(ctx, ws, sessionID, through)
	if err != nil {
		return Prefix{}, fmt.Errorf("read turns of %s through %d: %w", sessionID, through, err)
	}
	p := Prefix{Turns: len(turns)}
	if len(turns) == 0 {
		return p, nil
	}
	p.Last = turns[len(turns)-1].ID
	ids := make([]string, len(turns))
	for i, t := range turns {
		ids[i] = t.ID
		if !t.Settled() || !t.HasProviderBinding() {
			p.Irregular = append(p.Irregular, t)
		}
	}
	byTurn, err := r.InteractionsByTurnIDs(ctx, ws, ids)
	if err != nil {
		return Prefix{}, fmt.Errorf("read the interactions of %d prefix turns: %w", len(turns), err)
	}
	for _, t := range turns {
		for _, i := range byTurn[t.ID] {
			p.Interactions = append(p.Interactions, FrozenInteraction{Sequence: t.Sequence, Interaction: i.Clone()})
		}
	}
	var msgs map[string][]Message
	if typed, ok := r.(TypedMessagesReader); ok {
		msgs, err = typed.TypedMessagesByTurnIDs(ctx, ws, ids)
	} else {
		msgs, err = r.MessagesByTurnIDs(ctx, ws, ids)
	}
	if err != nil {
		return Prefix{}, fmt.Errorf("read the typed messages of %d prefix turns: %w", len(ids), err)
	}
	for _, id := range ids {
		for _, m := range msgs[id] {
			if m.Parts != nil {
				p.TypedMessages = append(p.TypedMessages, m)
			}
		}
	}
	return p, nil
}
