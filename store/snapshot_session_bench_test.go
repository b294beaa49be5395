package store

import (
	"encoding/json"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
)

// BenchmarkSessionSnapshotEncoding encodes and decodes the snapshot a committed operation keeps
// (its session only), where the session part is the whole of the work, in the form each dialect
// stores, without and with metadata (a later field: binary format 2 on SQLite; on PostgreSQL
// compact JSON where the store before wrote encoding/json of the snapshot).
func BenchmarkSessionSnapshotEncoding(b *testing.B) {
	for _, meta := range []bool{false, true} {
		s := forkengine.Snapshot{Version: 2, Session: forkSizedSnapshot().Session}
		name := "plain"
		if meta {
			s.Session.Metadata, name = json.RawMessage(`{"team":"a","labels":["x","y"]}`), "metadata"
		}
		op := forkengine.ForkOperation{ID: "op", Snapshot: s}
		for _, d := range []dialect{postgresDialect, sqliteDialect} {
			enc, err := encodeSnapshotFor(d, op)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(name+"/"+d.name+"/encode", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := encodeSnapshotFor(d, op); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(enc.text)), "bytes")
			})
			b.Run(name+"/"+d.name+"/decode", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := decodeSnapshot(enc.text); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
