package resolvers

import (
	"context"
	"reflect"
	"strings"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/models"
)

// Schema is the API's schema as gqlgen parsed it.
func Schema() *ast.Schema { return graph.NewExecutableSchema(graph.Config{}).Schema() }

// ResolvedLater reports whether gqlgen resolves typeName.fieldName apart from its object: the
// field has a resolver method (graph.ResolverRoot's <Type>Resolver has it) or is a method of its
// model that takes a context, so in a deferred fragment its value comes in a later payload and
// the first one holds only gqlgen's null in its place (transports.Deferral leaves that out). The
// other fields are read from the object as it is resolved, deferred or not. Root fields are never
// deferred by gqlgen.
func ResolvedLater(typeName, fieldName string) bool {
	return concurrentFields()[typeName][normalizeFieldName(fieldName)]
}

// objectModels are the models of the schema's object types (gqlgen.yml autobinds them by name).
var objectModels = map[string]reflect.Type{
	"Session": reflect.TypeFor[models.Session](), "Turn": reflect.TypeFor[models.Turn](),
	"Message": reflect.TypeFor[models.Message](), "ForkOperation": reflect.TypeFor[models.ForkOperation](),
	"Lineage": reflect.TypeFor[models.Lineage](), "LifecycleCapabilities": reflect.TypeFor[models.LifecycleCapabilities](),
	"WorkspaceEvent": reflect.TypeFor[models.WorkspaceEvent](), "PageInfo": reflect.TypeFor[models.PageInfo](),
	"SessionConnection": reflect.TypeFor[models.SessionConnection](), "SessionEdge": reflect.TypeFor[models.SessionEdge](),
	"TurnConnection": reflect.TypeFor[models.TurnConnection](), "TurnEdge": reflect.TypeFor[models.TurnEdge](),
	"ForkOperationConnection": reflect.TypeFor[models.ForkOperationConnection](),
	"ForkOperationEdge":       reflect.TypeFor[models.ForkOperationEdge](),
}

// concurrentFields maps each object type to the fields gqlgen resolves concurrently, read once:
// the methods of its <Type>Resolver interface (graph.ResolverRoot's method <Type>() returns it)
// and the methods of its model whose first argument is a context, both named after the fields
// (Go names: localId is LocalID). resolvers' TestResolvedLaterIsWhatGqlgenResolvesConcurrently
// compares the result with the generated code.
var concurrentFields = sync.OnceValue(func() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	add := func(typeName, method string) {
		if out[typeName] == nil {
			out[typeName] = map[string]bool{}
		}
		out[typeName][normalizeFieldName(method)] = true
	}
	root := reflect.TypeFor[graph.ResolverRoot]()
	for i := range root.NumMethod() {
		m := root.Method(i)
		if m.Type.NumOut() != 1 || m.Type.Out(0).Kind() != reflect.Interface {
			continue
		}
		if m.Name == "Query" || m.Name == "Mutation" || m.Name == "Subscription" {
			continue
		}
		resolver := m.Type.Out(0)
		for j := range resolver.NumMethod() {
			add(m.Name, resolver.Method(j).Name)
		}
	}
	ctxType := reflect.TypeFor[context.Context]()
	for typeName, model := range objectModels {
		ptr := reflect.PointerTo(model)
		for i := range ptr.NumMethod() {
			m := ptr.Method(i)
			if m.Type.NumIn() > 1 && m.Type.In(1) == ctxType { // In(0) is the receiver
				add(typeName, m.Name)
			}
		}
	}
	return out
})

// normalizeFieldName compares a GraphQL field name with gqlgen's Go name for it.
func normalizeFieldName(name string) string {
	return strings.ToLower(strings.ReplaceAll(name, "_", ""))
}
