package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/forkgraph/forkgraph/forkengine"
)

// NarrowReads are narrower batch reads a store may offer (store.DB does), each reading only some
// columns of a relation's rows. A response whose operation shows nothing else of those rows
// reads with them: the driver copies out and boxes every column it returns, and the list query
// (a page's latest turns' messages as role and content, each lineage's source session) read
// several columns per row that nobody saw.
type NarrowReads interface {
	// MessageTextsByTurnIDs is TurnMessagesAfter from the first message with only each message's
	// turn, role and content.
	MessageTextsByTurnIDs(ctx context.Context, workspaceID string, turnIDs []string, limit int) (map[string][]forkengine.Message, error)
	// LineageEndsByTargetIDs is LineagesByTargetIDs with only each lineage's two sessions.
	LineageEndsByTargetIDs(ctx context.Context, workspaceID string, targetIDs []string) (map[string]forkengine.Lineage, error)
}

// The fields of Message and Lineage their narrow reads answer (plus __typename).
var (
	messageTextFields = map[string]bool{"role": true, "content": true, "__typename": true}
	lineageEndFields  = map[string]bool{"sourceSessionId": true, "sourceSession": true, "targetSessionId": true,
		"targetSession": true, "__typename": true}
)

// showsOnly reports whether the operation of ctx shows, of any object of type typ, nothing but
// fields. It is decided on the whole document, conservatively: every field selected on typ, or
// on an interface or union (an object may be behind one: Node), must be one of fields, in the
// operation and in every fragment, whether or not @skip, @include or @defer apply. The document
// is what the client sent, so this is the same for every response of the operation (each
// subscription event too).
func showsOnly(ctx context.Context, typ string, fields map[string]bool) bool {
	if !graphql.HasOperationContext(ctx) {
		return false
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Doc == nil {
		return false
	}
	if !selectsOnly(oc.Operation.SelectionSet, typ, fields) {
		return false
	}
	for _, f := range oc.Doc.Fragments {
		if !selectsOnly(f.SelectionSet, typ, fields) {
			return false
		}
	}
	return true
}

func selectsOnly(set ast.SelectionSet, typ string, fields map[string]bool) bool {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if parent := sel.ObjectDefinition; parent == nil ||
				(parent.Name == typ || parent.Kind != ast.Object) && !fields[sel.Name] {
				return false
			}
			if !selectsOnly(sel.SelectionSet, typ, fields) {
				return false
			}
		case *ast.InlineFragment:
			if !selectsOnly(sel.SelectionSet, typ, fields) {
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
