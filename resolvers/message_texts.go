package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/forkgraph/forkgraph/forkengine"
)

// MessageTextReader is a narrower read of turns' messages a store may offer (store.DB does):
// MessagesByTurnIDs with only each message's turn, role and content filled in. A response whose
// operation shows nothing else of any message reads its transcripts with it (readsOnlyMessageText):
// the driver copies out and boxes every column it returns, and a list query that shows each latest
// turn's messages as role and content read four columns per message nobody sees.
type MessageTextReader interface {
	MessageTextsByTurnIDs(ctx context.Context, workspaceID string, turnIDs []string) (map[string][]forkengine.Message, error)
}

// messageTextFields are the fields of Message a text-only read answers.
var messageTextFields = map[string]bool{"role": true, "content": true, "__typename": true}

// readsOnlyMessageText reports whether the operation of ctx shows, of any message, nothing but
// what MessageTextReader reads. It is decided on the whole document, conservatively: every field
// selected on Message, or on an interface or union (a message may be behind one: Node), must be
// role, content or __typename, in the operation and in every fragment, whether or not @skip,
// @include or @defer apply. The document is what the client sent, so this is the same for every
// response of the operation (each subscription event too).
func readsOnlyMessageText(ctx context.Context) bool {
	if !graphql.HasOperationContext(ctx) {
		return false
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Doc == nil {
		return false
	}
	if !onlyMessageText(oc.Operation.SelectionSet) {
		return false
	}
	for _, f := range oc.Doc.Fragments {
		if !onlyMessageText(f.SelectionSet) {
			return false
		}
	}
	return true
}

func onlyMessageText(set ast.SelectionSet) bool {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if parent := sel.ObjectDefinition; parent == nil ||
				(parent.Name == "Message" || parent.Kind != ast.Object) && !messageTextFields[sel.Name] {
				return false
			}
			if !onlyMessageText(sel.SelectionSet) {
				return false
			}
		case *ast.InlineFragment:
			if !onlyMessageText(sel.SelectionSet) {
				return false
			}
		case *ast.FragmentSpread:
			// Its fragment's fields are checked with the document's fragments.
		default:
			return false
		}
	}
	return true
}
