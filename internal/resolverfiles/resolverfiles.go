// Package resolverfiles keeps package resolvers one file per GraphQL type: the methods of
// <type>Resolver (and of <type>ConnectionResolver), the type itself and the root's <Type>()
// constructor live in <type>.go, snake case (sessionResolver and sessionConnectionResolver in
// session.go, forkOperationResolver in fork_operation.go). gqlgen does not write resolvers here
// (gqlgen.yml has no resolver section), so a new field of the schema fails the build until its
// method is written, and Misplaced (run by the resolvers tests) says where it goes; Move (`go run
// ./internal/resolverfiles/move`) puts every misplaced declaration in its file, for a merge that brought
// some in another file.
package resolverfiles

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Decl is one declaration of a resolver type: a method of it, the type, or the root's constructor.
type Decl struct {
	File string // where it is, relative to the package directory
	Want string // where it belongs
	Name string // e.g. "sessionResolver.Turns"
}

// FileFor returns the file the resolver struct type (e.g. "sessionConnectionResolver") belongs in:
// "session.go". ok is false for a name that is not a <type>Resolver.
func FileFor(structName string) (string, bool) {
	base, ok := strings.CutSuffix(structName, "Resolver")
	if !ok || base == "" || !unicode.IsLower(rune(base[0])) {
		return "", false
	}
	base = strings.TrimSuffix(base, "Connection")
	var b strings.Builder
	for i, c := range base {
		if unicode.IsUpper(c) {
			if i > 0 {
				b.WriteByte('_')
			}
			c = unicode.ToLower(c)
		}
		b.WriteRune(c)
	}
	return b.String() + ".go", true
}

// resolverOf names the resolver struct a declaration belongs to, or "".
func resolverOf(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil || len(d.Recv.List) != 1 {
			return ""
		}
		star, ok := d.Recv.List[0].Type.(*ast.StarExpr)
		if !ok {
			return ""
		}
		recv, ok := star.X.(*ast.Ident)
		if !ok {
			return ""
		}
		if recv.Name != "Resolver" {
			return recv.Name
		}
		// The root's constructor: func (r *Resolver) Session() graph.SessionResolver.
		if d.Type.Results != nil && len(d.Type.Results.List) == 1 {
			if sel, ok := d.Type.Results.List[0].Type.(*ast.SelectorExpr); ok && sel.Sel.Name == d.Name.Name+"Resolver" {
				return strings.ToLower(d.Name.Name[:1]) + d.Name.Name[1:] + "Resolver"
			}
		}
	case *ast.GenDecl:
		if d.Tok == token.TYPE && len(d.Specs) == 1 {
			return d.Specs[0].(*ast.TypeSpec).Name.Name
		}
	}
	return ""
}

func declName(d ast.Decl, resolver string) string {
	if f, ok := d.(*ast.FuncDecl); ok {
		return resolver + "." + f.Name.Name
	}
	return resolver
}

type parsed struct {
	fset  *token.FileSet
	files map[string]*ast.File
	src   map[string][]byte
}

func parse(dir string) (*parsed, error) {
	p := &parsed{fset: token.NewFileSet(), files: map[string]*ast.File{}, src: map[string][]byte{}}
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(p.fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		p.files[filepath.Base(name)], p.src[filepath.Base(name)] = f, src
	}
	return p, nil
}

// Misplaced lists the resolver declarations of the package in dir that are not in their type's
// file. Type blocks grouping several resolver structs count as misplaced.
func Misplaced(dir string) ([]Decl, error) {
	p, err := parse(dir)
	if err != nil {
		return nil, err
	}
	var out []Decl
	for name, f := range p.files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE && len(g.Specs) > 1 {
				for _, s := range g.Specs {
					if want, ok := FileFor(s.(*ast.TypeSpec).Name.Name); ok {
						out = append(out, Decl{File: name, Want: want, Name: s.(*ast.TypeSpec).Name.Name})
					}
				}
				continue
			}
			r := resolverOf(d)
			want, ok := FileFor(r)
			if ok && want != name {
				out = append(out, Decl{File: name, Want: want, Name: declName(d, r)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Move puts every misplaced resolver declaration of the package in dir into its type's file
// (created when missing), in the order they were found, splitting grouped type blocks; a source
// file left with nothing but its package clause and imports is removed. It rewrites files in
// place and formats them; the imports a moved declaration needs are copied from its old file.
func Move(dir string) error {
	p, err := parse(dir)
	if err != nil {
		return err
	}
	appendTo := map[string][]string{}  // file -> declarations to append
	heads := map[string][]string{}     // file -> types and constructors, put before the methods
	importsOf := map[string][]string{} // file -> import specs it needs
	cut := map[string][][2]int{}       // file -> byte ranges to remove
	var order []string
	for _, name := range sortedKeys(p.files) {
		f, src := p.files[name], p.src[name]
		for _, d := range f.Decls {
			var pieces []struct{ want, text string }
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE && len(g.Specs) > 1 {
				all := true
				for _, s := range g.Specs {
					want, ok := FileFor(s.(*ast.TypeSpec).Name.Name)
					if !ok {
						all = false
						break
					}
					pieces = append(pieces, struct{ want, text string }{want, "type " + string(p.text(src, s.Pos(), s.End()))})
				}
				if !all {
					continue
				}
			} else if want, ok := FileFor(resolverOf(d)); ok && want != name {
				start := d.Pos()
				if doc := docOf(d); doc != nil {
					start = doc.Pos()
				}
				pieces = append(pieces, struct{ want, text string }{want, string(p.text(src, start, d.End()))})
			} else {
				continue
			}
			start := d.Pos()
			if doc := docOf(d); doc != nil {
				start = doc.Pos()
			}
			cut[name] = append(cut[name], [2]int{p.fset.Position(start).Offset, p.fset.Position(d.End()).Offset})
			for _, piece := range pieces {
				_, seenMethods := appendTo[piece.want]
				if _, seenHeads := heads[piece.want]; !seenMethods && !seenHeads {
					order = append(order, piece.want)
				}
				if isHead(d) {
					heads[piece.want] = append(heads[piece.want], piece.text)
				} else {
					appendTo[piece.want] = append(appendTo[piece.want], piece.text)
				}
				importsOf[piece.want] = append(importsOf[piece.want], neededImports(f, piece.text)...)
			}
		}
	}
	for name, ranges := range cut {
		src := p.src[name]
		var b bytes.Buffer
		last := 0
		for _, r := range ranges {
			b.Write(src[last:r[0]])
			last = r[1]
		}
		b.Write(src[last:])
		if err := writeFormatted(filepath.Join(dir, name), b.Bytes(), nil, true); err != nil {
			return err
		}
	}
	for _, want := range order {
		path := filepath.Join(dir, want)
		head, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			head = []byte("package " + p.pkgName() + "\n")
		} else if err != nil {
			return err
		}
		decls := append(heads[want], appendTo[want]...)
		body := append(head, []byte("\n"+strings.Join(decls, "\n\n")+"\n")...)
		if err := writeFormatted(path, body, importsOf[want], false); err != nil {
			return err
		}
	}
	return nil
}

// isHead reports whether d is a type declaration or the root's constructor of a resolver type.
func isHead(d ast.Decl) bool {
	if f, ok := d.(*ast.FuncDecl); ok {
		return f.Recv.List[0].Type.(*ast.StarExpr).X.(*ast.Ident).Name == "Resolver"
	}
	return true
}

func (p *parsed) text(src []byte, from, to token.Pos) []byte {
	return src[p.fset.Position(from).Offset:p.fset.Position(to).Offset]
}

func (p *parsed) pkgName() string {
	for _, f := range p.files {
		return f.Name.Name
	}
	return "resolvers"
}

func docOf(d ast.Decl) *ast.CommentGroup {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return d.Doc
	case *ast.GenDecl:
		return d.Doc
	}
	return nil
}

// neededImports returns the import specs of f whose package name text uses as a qualifier.
func neededImports(f *ast.File, text string) []string {
	var out []string
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := filepath.Base(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if strings.Contains(text, name+".") {
			spec := imp.Path.Value
			if imp.Name != nil {
				spec = imp.Name.Name + " " + spec
			}
			out = append(out, spec)
		}
	}
	return out
}

// writeFormatted adds the imports in add to src's import block (or a new one), drops imports no
// longer used when prune is set, formats and writes it; a file left without declarations is
// removed.
func writeFormatted(path string, src []byte, add []string, prune bool) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	have := map[string]bool{}
	for _, imp := range f.Imports {
		have[imp.Path.Value] = true
	}
	var extra []string
	for _, spec := range add {
		fields := strings.Fields(spec)
		if !have[fields[len(fields)-1]] && !slices.Contains(extra, spec) {
			extra = append(extra, spec)
		}
	}
	text := string(src)
	if len(extra) > 0 {
		// The standard library first, then the rest, as goimports groups them.
		var std, others []string
		for _, spec := range extra {
			fields := strings.Fields(spec)
			if strings.Contains(strings.SplitN(strings.Trim(fields[len(fields)-1], `"`), "/", 2)[0], ".") {
				others = append(others, spec)
			} else {
				std = append(std, spec)
			}
		}
		var groups []string
		for _, g := range [][]string{std, others} {
			if len(g) > 0 {
				groups = append(groups, "\t"+strings.Join(g, "\n\t"))
			}
		}
		block := "import (\n" + strings.Join(groups, "\n\n") + "\n)\n"
		if len(f.Imports) > 0 {
			// A second import block; format.Source keeps it, and the next gofmt-aware edit merges it.
			end := fset.Position(f.Decls[0].End()).Offset
			text = text[:end] + "\n\n" + block + text[end:]
		} else {
			pkgEnd := fset.Position(f.Name.End()).Offset
			text = text[:pkgEnd] + "\n\n" + block + text[pkgEnd:]
		}
	}
	if prune {
		text = emptyImports.ReplaceAllString(pruneImports(path, text), "")
	}
	out, err := format.Source([]byte(text))
	if err != nil {
		return fmt.Errorf("format %s: %w", path, err)
	}
	f, err = parser.ParseFile(token.NewFileSet(), path, out, 0)
	if err != nil {
		return err
	}
	onlyImports := true
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); !ok || g.Tok != token.IMPORT {
			onlyImports = false
		}
	}
	if onlyImports {
		return os.Remove(path)
	}
	return os.WriteFile(path, out, 0o644)
}

// emptyImports matches an import block pruneImports emptied.
var emptyImports = regexp.MustCompile(`import \(\s*\)\n`)

// pruneImports removes the imports text no longer uses.
func pruneImports(path, text string) string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, text, parser.ParseComments)
	if err != nil {
		return text
	}
	body := text
	if len(f.Decls) > 0 {
		last := f.Decls[0]
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
				last = d
			}
		}
		body = text[fset.Position(last.End()).Offset:]
	}
	var drop [][2]int
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := filepath.Base(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "_" || strings.Contains(body, name+".") {
			continue
		}
		drop = append(drop, [2]int{fset.Position(imp.Pos()).Offset, fset.Position(imp.End()).Offset})
	}
	for i := len(drop) - 1; i >= 0; i-- {
		text = text[:drop[i][0]] + text[drop[i][1]:]
	}
	return text
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
