package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
)

// ProbeTurns asks the adapter about the whole batch and returns its answers in order. Every
// /probe request is about one workspace, which it names (workspaceId), so the batch is sent as one
// request per workspace (a batch mixes workspaces only for a caller allowed several), and a
// workspace's probes are split further when their body would exceed Options.MaxProbeRequestBytes
// (every probe repeats its session, settings included, so a page of turns of one session can be
// many MiB). An empty batch makes no request. Any failure of any request, or an answer of the
// wrong length, is an error, which callers read as "no" for every probe; a transport failure or a
// 5xx wraps forkengine.ErrProviderUnavailable, as for Describe.
func (d *Driver) ProbeTurns(ctx context.Context, probes []forkengine.Probe) ([]bool, error) {
	chunks, err := d.probeChunks(probes)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(probes))
	for _, c := range chunks {
		answers, err := d.probeOnce(ctx, c.body, len(c.indexes))
		if err != nil {
			return nil, err
		}
		for i, at := range c.indexes {
			out[at] = answers[i]
		}
	}
	return out, nil
}

// probeChunk is one /probe request body and the positions in the batch of the probes it carries.
type probeChunk struct {
	body    []byte
	indexes []int
}

var probeBodyClose = []byte(`]}`)

// probeChunks encodes each probe once and packs a workspace's probes, in order, into bodies of at
// most d.maxProbe bytes; a probe too large for any body gets one of its own. Workspaces come in
// the order the batch first names them.
func (d *Driver) probeChunks(probes []forkengine.Probe) ([]probeChunk, error) {
	var order []string
	byWorkspace := map[string][]int{}
	for i, p := range probes {
		ws := p.Session.WorkspaceID
		if _, seen := byWorkspace[ws]; !seen {
			order = append(order, ws)
		}
		byWorkspace[ws] = append(byWorkspace[ws], i)
	}
	var chunks []probeChunk
	for _, ws := range order {
		packed, err := d.packProbes(ws, probes, byWorkspace[ws])
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, packed...)
	}
	return chunks, nil
}

// packProbes packs the probes at indexes, all of workspace ws, into bodies of at most d.maxProbe
// bytes.
func (d *Driver) packProbes(ws string, probes []forkengine.Probe, indexes []int) ([]probeChunk, error) {
	name, err := json.Marshal(ws)
	if err != nil {
		return nil, fmt.Errorf("encode /probe request: %w", err)
	}
	head := append(append([]byte(`{"workspaceId":`), name...), `,"probes":[`...)
	var chunks []probeChunk
	var cur probeChunk
	flush := func() {
		if len(cur.indexes) > 0 {
			cur.body = append(cur.body, probeBodyClose...)
			chunks = append(chunks, cur)
		}
		cur = probeChunk{}
	}
	for _, i := range indexes {
		enc, err := json.Marshal(wireProbe{Session: toWireSession(probes[i].Session), Turn: toWireTurn(probes[i].Turn)})
		if err != nil {
			return nil, fmt.Errorf("encode /probe request: %w", err)
		}
		if len(cur.indexes) > 0 && int64(len(cur.body)+1+len(enc)+len(probeBodyClose)) > d.maxProbe {
			flush()
		}
		if len(cur.indexes) == 0 {
			cur.body = append(bytes.Clone(head), enc...)
		} else {
			cur.body = append(append(cur.body, ','), enc...)
		}
		cur.indexes = append(cur.indexes, i)
	}
	flush()
	return chunks, nil
}

// probeOnce sends one /probe body of count probes and returns its answers.
func (d *Driver) probeOnce(ctx context.Context, body []byte, count int) ([]bool, error) {
	r, err := d.send(ctx, "/probe", body, nil)
	if err != nil {
		return nil, r.availability(err)
	}
	if !r.ok() {
		return nil, r.availability(r.statusError("/probe"))
	}
	var out probeResponse
	if err := json.Unmarshal(r.body, &out); err != nil {
		return nil, fmt.Errorf("decode /probe response: %w", err)
	}
	if len(out.Forkable) != count {
		return nil, fmt.Errorf("/probe answered %d values for %d probes", len(out.Forkable), count)
	}
	return out.Forkable, nil
}
