package limits

import (
	"strconv"

	"github.com/vektah/gqlparser/v2/ast"
)

// saturated caps every count, so a fragment bomb's 2^n fields cannot overflow an int.
const saturated = 1 << 30

func addCapped(a, b int) int { return min(a+b, saturated) }

func itoa(n int) string { return strconv.Itoa(n) }

// selectionCost is what a selection set costs with its fragments expanded, computed without
// expanding them.
type selectionCost struct {
	fields     int // fields in the expanded set, at every level
	top        int // fields at the set's own level (root fields, for an operation)
	depth      int // deepest path of ordinary fields; an introspection root does not count
	introDepth int // deepest path that enters __schema or __type, counted from the set
	allDepth   int // deepest path of any fields, what introDepth is built from
	introRoots int // __schema and __type fields in the expanded set
}

func (c selectionCost) plus(o selectionCost) selectionCost {
	return selectionCost{
		fields:     addCapped(c.fields, o.fields),
		top:        addCapped(c.top, o.top),
		depth:      max(c.depth, o.depth),
		introDepth: max(c.introDepth, o.introDepth),
		allDepth:   max(c.allDepth, o.allDepth),
		introRoots: addCapped(c.introRoots, o.introRoots),
	}
}

// costMeter measures selection sets, each fragment once: its cost is memoized by name the first
// time it is spread. A fragment spread while it is being measured (a cycle, which validation
// refuses later) or never defined costs nothing here.
type costMeter struct {
	fragments map[string]*ast.FragmentDefinition
	memo      map[string]selectionCost
	active    map[string]bool
}

func newCostMeter(doc *ast.QueryDocument) *costMeter {
	m := &costMeter{fragments: map[string]*ast.FragmentDefinition{}, memo: map[string]selectionCost{}, active: map[string]bool{}}
	for _, f := range doc.Fragments {
		if _, dup := m.fragments[f.Name]; !dup {
			m.fragments[f.Name] = f
		}
	}
	return m
}

func (m *costMeter) operation(op *ast.OperationDefinition) selectionCost {
	return m.set(op.SelectionSet)
}

func (m *costMeter) set(set ast.SelectionSet) selectionCost {
	var total selectionCost
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			total = total.plus(m.field(s))
		case *ast.InlineFragment:
			total = total.plus(m.set(s.SelectionSet))
		case *ast.FragmentSpread:
			total = total.plus(m.spread(s.Name))
		}
	}
	return total
}

func (m *costMeter) spread(name string) selectionCost {
	if c, ok := m.memo[name]; ok {
		return c
	}
	def, ok := m.fragments[name]
	if !ok || m.active[name] {
		return selectionCost{}
	}
	m.active[name] = true
	c := m.set(def.SelectionSet)
	delete(m.active, name)
	m.memo[name] = c
	return c
}

// field costs one field and what it selects. Inside __schema and __type every field counts
// towards introDepth (the ofType chain of the standard introspection query is deep but cheap);
// outside, towards depth, which has the lower limit.
func (m *costMeter) field(f *ast.Field) selectionCost {
	child := m.set(f.SelectionSet)
	c := selectionCost{fields: addCapped(1, child.fields), top: 1, allDepth: 1 + child.allDepth}
	if f.Name == "__schema" || f.Name == "__type" {
		c.introDepth = 1 + child.allDepth
		c.introRoots = 1
		return c
	}
	c.depth = 1 + child.depth
	if child.introDepth > 0 {
		c.introDepth = 1 + child.introDepth
	}
	c.introRoots = child.introRoots
	return c
}

// writtenCounts counts what the document spells out, each node once however often it is spread.
type writtenCounts struct{ aliases, directives int }

func (w *writtenCounts) document(doc *ast.QueryDocument) {
	for _, op := range doc.Operations {
		w.directives += len(op.Directives)
		for _, v := range op.VariableDefinitions {
			w.directives += len(v.Directives)
		}
		w.set(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		w.directives += len(f.Directives)
		w.set(f.SelectionSet)
	}
}

func (w *writtenCounts) set(set ast.SelectionSet) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Alias != s.Name {
				w.aliases++
			}
			w.directives += len(s.Directives)
			w.set(s.SelectionSet)
		case *ast.InlineFragment:
			w.directives += len(s.Directives)
			w.set(s.SelectionSet)
		case *ast.FragmentSpread:
			w.directives += len(s.Directives)
		}
	}
}
