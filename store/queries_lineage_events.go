package store

import (
	"context"

	"github.com/forkgraph/forkgraph/forkengine"
)

// LineagesByTargetIDs returns the lineage of each forked session among targetIDs.
func (q queries) LineagesByTargetIDs(ctx context.Context, ws string, targetIDs []string) (map[string]forkengine.Lineage, error) {
	out := map[string]forkengine.Lineage{}
	err := q.inChunks(targetIDs, func(chunk []string) error {
		var rows []lineageRow
		if err := q.with(ctx).Where("workspace_id = ? AND target_session_id IN ?", ws, chunk).Find(&rows).Error; err != nil {
			return classify(err, "lineages by targets")
		}
		for _, r := range rows {
			out[r.TargetSessionID] = r.domain()
		}
		return nil
	})
	return out, err
}

// LineagesBySourceIDs returns each source's lineages ordered by (ForkedAt, TargetSessionID).
func (q queries) LineagesBySourceIDs(ctx context.Context, ws string, sourceIDs []string) (map[string][]forkengine.Lineage, error) {
	out := map[string][]forkengine.Lineage{}
	err := q.inChunks(sourceIDs, func(chunk []string) error {
		var rows []lineageRow
		err := q.with(ctx).Where("workspace_id = ? AND source_session_id IN ?", ws, chunk).
			Order("source_session_id, forked_at_us, target_session_id").Find(&rows).Error
		if err != nil {
			return classify(err, "lineages by sources")
		}
		for _, r := range rows {
			out[r.SourceSessionID] = append(out[r.SourceSessionID], r.domain())
		}
		return nil
	})
	return out, err
}

// EventsAfter returns up to limit (<= 0: all) events of the workspace with Cursor > after, in
// cursor order.
func (q queries) EventsAfter(ctx context.Context, ws string, after int64, n int) ([]forkengine.Event, error) {
	var rows []eventRow
	db := q.with(ctx).Where("workspace_id = ? AND cursor > ?", ws, after).Order("cursor")
	if err := limit(db, n).Find(&rows).Error; err != nil {
		return nil, classify(err, "events after %d", after)
	}
	out := make([]forkengine.Event, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// OldestEventCursor returns the smallest cursor kept for the workspace, or 0 when it has none.
func (q queries) OldestEventCursor(ctx context.Context, ws string) (int64, error) {
	var oldest int64
	err := q.with(ctx).Raw("SELECT COALESCE(MIN(cursor), 0) FROM events WHERE workspace_id = ?", ws).Scan(&oldest).Error
	if err != nil {
		return 0, classify(err, "oldest event cursor")
	}
	return oldest, nil
}
