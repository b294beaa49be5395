package models

import (
	"context"
	"errors"
)

// Relations resolves, for the views one response built, the relations a list query asks of every
// row: a session's latest turn and lineage, a turn's forkability and messages, a lineage's source
// session. The resolvers implement it over the response's loaders and hand it to every view they
// build (SessionFrom, TurnFrom, LineageFrom and the connections take it).
//
// Why methods on the views instead of resolvers: gqlgen runs every resolver field in a goroutine
// of its own when an object has more than one, so a page of 100 sessions cost a goroutine per
// session and per turn, each growing its stack through gqlgen's deep execution and waiting on a
// loader. A method without a context is called in line. The batching is unchanged: the loaders
// behind Relations still read each relation of a page in one statement (their hints name the
// whole page before the first row asks).
type Relations interface {
	LatestTurn(s *Session) (*Turn, error)
	ForkedFrom(s *Session) (*Lineage, error)
	TurnForkable(t *Turn) (bool, error)
	TurnMessages(t *Turn) ([]*Message, error)
	LineageSourceSession(l *Lineage) (*Session, error)
}

// errUnbound is what a view built without Relations answers for them: a programming error (the
// presenter shows it as INTERNAL_SERVER_ERROR), never a silent null.
var errUnbound = errors.New("models: view built without Relations")

// unbound is the Relations of a view built with nil.
type unbound struct{}

func (unbound) LatestTurn(*Session) (*Turn, error)              { return nil, errUnbound }
func (unbound) ForkedFrom(*Session) (*Lineage, error)           { return nil, errUnbound }
func (unbound) TurnForkable(*Turn) (bool, error)                { return false, errUnbound }
func (unbound) TurnMessages(*Turn) ([]*Message, error)          { return nil, errUnbound }
func (unbound) LineageSourceSession(*Lineage) (*Session, error) { return nil, errUnbound }

func orUnbound(r Relations) Relations {
	if r == nil {
		return unbound{}
	}
	return r
}

// LatestTurn is Session.latestTurn: the turn with the highest sequence, or nil. Unlike the other
// relations it takes a context, which makes gqlgen resolve it concurrently: a field gqlgen calls
// in line is never deferred, and latestTurn (with its forkability probe below it) is the field
// clients put behind @defer. ctx is unused: the loaders read with the response's context.
func (s *Session) LatestTurn(_ context.Context) (*Turn, error) { return s.rel.LatestTurn(s) }

// ForkedFrom is Session.forkedFrom: the fork that created the session, or nil.
func (s *Session) ForkedFrom() (*Lineage, error) { return s.rel.ForkedFrom(s) }

// ProviderForkBindingAvailable is Turn.providerForkBindingAvailable (see the schema).
func (t *Turn) ProviderForkBindingAvailable() (bool, error) { return t.rel.TurnForkable(t) }

// Messages is Turn.messages: the turn's messages in order.
func (t *Turn) Messages() ([]*Message, error) { return t.rel.TurnMessages(t) }

// SourceSession is Lineage.sourceSession: the source, or nil when it was deleted.
func (l *Lineage) SourceSession() (*Session, error) { return l.rel.LineageSourceSession(l) }
