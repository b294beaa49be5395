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
	base := root.Title
	if base == "" {
		base = source.Title
	}
	if base == "" {
		return "", nil
	}
	forks, err := countFamilyForks(ctx, r, root.WorkspaceID, root.ID)
	if err != nil {
		return "", err
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

// countFamilyForks counts the non-failed operations whose source is in the family: the root and,
// transitively, the target of every non-failed operation of the family. Only a committed
// operation's target exists as a session (and so can be forked again), and each committed one left
// exactly one lineage row, so the count is the family's lineages plus its in-flight and unknown
// operations. Reading lineages and the few unfinished operations keeps this cheap however many
// forks the family has: no operation snapshot is loaded for a committed fork.
func countFamilyForks(ctx context.Context, r Reader, workspaceID, rootID string) (int, error) {
	family, err := familyMembers(ctx, r, workspaceID, rootID)
	if err != nil {
		return 0, err
	}
	unfinished, err := unfinishedOperations(ctx, r, workspaceID)
	if err != nil {
		return 0, err
	}
	count := len(family) - 1 // one committed fork per member below the root
	for _, op := range unfinished {
		if family[op.SourceSessionID] {
			count++
		}
	}
	return count, nil
}

// familyMembers walks lineages down from the root, one batched read per generation.
func familyMembers(ctx context.Context, r Reader, workspaceID, rootID string) (map[string]bool, error) {
	family := map[string]bool{rootID: true}
	for generation := []string{rootID}; len(generation) > 0; {
		lineages, err := r.LineagesBySourceIDs(ctx, workspaceID, generation)
		if err != nil {
			return nil, fmt.Errorf("read forks of %v: %w", generation, err)
		}
		generation = nil
		for _, forks := range lineages {
			for _, l := range forks {
				if !family[l.TargetSessionID] {
					family[l.TargetSessionID] = true
					generation = append(generation, l.TargetSessionID)
				}
			}
		}
	}
	return family, nil
}

// unfinishedPageSize bounds one read of unfinished operations.
const unfinishedPageSize = 500

// unfinishedOperations returns the workspace's operations that are neither committed nor failed.
func unfinishedOperations(ctx context.Context, r Reader, workspaceID string) ([]ForkOperation, error) {
	filter := OperationFilter{Statuses: []OperationStatus{StatusPrepared, StatusDispatching,
		StatusProviderAccepted, StatusUnknown}}
	var all []ForkOperation
	var after PageCursor
	for {
		page, err := r.ListOperations(ctx, workspaceID, filter, after, unfinishedPageSize)
		if err != nil {
			return nil, fmt.Errorf("read unfinished operations: %w", err)
		}
		all = append(all, page...)
		if len(page) < unfinishedPageSize {
			return all, nil
		}
		last := page[len(page)-1]
		after = PageCursor{Time: last.CreatedAt, ID: last.ID}
	}
}
