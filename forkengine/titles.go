package forkengine

import (
	"context"
	"fmt"
)

// familyTitle is the frozen title of a new fork of source: "<base> (<n>)", where the base is the
// title of the family root (the session the lineage leads back to), or the source's own title
// when the root has none, and n is 2 plus the number of forks made so far anywhere in the family
// that did not fail. Forks of forks share the root's numbering: "123 (2)", a fork of that "123
// (3)", another fork of the root "123 (4)". An empty base gives an empty title.
func familyTitle(ctx context.Context, r Reader, source Session) (string, error) {
	root, err := familyRoot(ctx, r, source)
	if err != nil {
		return "", err
	}
	if tx, ok := r.(Tx); ok {
		// Two forks in one family must not read the same count: the family's forks are counted
		// under its root's lock.
		if err := tx.Lock(ctx, familyLock(root.WorkspaceID, root.ID)); err != nil {
			return "", err
		}
	}
	base := root.Title
	if base == "" {
		base = source.Title
	}
	if base == "" {
		return "", nil
	}
	forks, err := r.CountFamilyForks(ctx, root.WorkspaceID, root.ID)
	if err != nil {
		return "", fmt.Errorf("count forks of the family of %s: %w", root.ID, err)
	}
	return fmt.Sprintf("%s (%d)", base, forks+2), nil
}

// familyRoot follows forkedFrom lineages upward from s. A purged ancestor ends the walk at the
// last session still present; the visited set guards against a corrupt cycle.
func familyRoot(ctx context.Context, r Reader, s Session) (Session, error) {
	visited := map[string]bool{s.ID: true}
	for {
		lineages, err := r.LineagesByTargetIDs(ctx, s.WorkspaceID, []string{s.ID})
		if err != nil {
			return Session{}, fmt.Errorf("read lineage of %s: %w", s.ID, err)
		}
		l, ok := lineages[s.ID]
		if !ok || visited[l.SourceSessionID] {
			return s, nil
		}
		parent, found, err := findSession(ctx, r, s.WorkspaceID, l.SourceSessionID)
		if err != nil || !found {
			return s, err
		}
		visited[parent.ID] = true
		s = parent
	}
}
