package enginebench

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3" // the plain driver, to read dbstat from a copy of the file

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/simulated"
	"github.com/forkgraph/forkgraph/store"
)

// BenchmarkWALFrames counts the WAL frames (pages) each of a fork's three transactions writes:
// every frame is two write calls and a page of checksumming at commit, and a copy at the
// checkpoint, so frames are what a fork's writes cost SQLite, exactly, where CPU figures move
// with the machine's load. It drives the engine step by step (NoBackground: StartFork is the
// prepare transaction, ProcessOperation the dispatch and the commit) and reads the frames each
// step appended from the WAL file. With -v and -tags sqlite_dbstat it also names the table or
// index of each page (dbstat on a copy of the file at the end; "free" is a page on the
// freelist by then, such as a frozen snapshot's overflow pages once its commit freed them).
//
//	go test -tags sqlite_dbstat -run '^$' -bench WALFrames -benchtime 50x -v ./bench/engine
func BenchmarkWALFrames(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "frames.db")
	db, err := store.Open(ctx, store.Config{Driver: store.DriverSQLite, DSN: path, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatalf("open store: %v", err)
	}
	defer db.Close()
	engine, err := forkengine.New(forkengine.Config{Store: db, NoBackground: true, DisableBarrier: true,
		Drivers: map[string]forkengine.Driver{"simulated": simulated.New(simulated.Options{})}})
	if err != nil {
		b.Fatalf("build engine: %v", err)
	}
	seedSource(b, engine, sourceID(0))
	log := &walLog{path: path + "-wal"}
	steps := [3]string{"prepare", "dispatch", "commit"}
	var frames [3][]uint32
	fork := func(i int, measured bool) {
		log.read(b) // what came before is not this fork's
		op, err := engine.StartFork(ctx, forkengine.ForkInput{WorkspaceID: workspaceID, SourceSessionID: sourceID(0),
			ThroughTurnID: sourceID(0) + "/" + turnID(sourceTurns), RequestID: fmt.Sprintf("frames-%d", i)})
		if err != nil {
			b.Fatalf("fork %d: %v", i, err)
		}
		prepared := log.read(b)
		if op, err = engine.ProcessOperation(ctx, workspaceID, op.ID); err != nil || op.Status != forkengine.StatusCommitted {
			b.Fatalf("process fork %d: %s, %v", i, op.Status, err)
		}
		processed := log.read(b)
		if len(prepared) != 1 || len(processed) != 2 {
			b.Fatalf("fork %d wrote %d + %d transactions, want 1 + 2", i, len(prepared), len(processed))
		}
		if measured {
			for k, txn := range [][]uint32{prepared[0], processed[0], processed[1]} {
				frames[k] = append(frames[k], txn...)
			}
		}
	}
	for i := range 10 { // the tables' first pages and splits are not a fork's steady cost
		fork(i, false)
	}
	b.ResetTimer()
	n := 0
	for b.Loop() {
		fork(10+n, true)
		n++
	}
	b.StopTimer()
	total := 0
	for k := range steps {
		total += len(frames[k])
		b.ReportMetric(float64(len(frames[k]))/float64(n), steps[k]+"-frames/fork")
	}
	b.ReportMetric(float64(total)/float64(n), "frames/fork")
	if owners := pageOwners(b, path); owners != nil {
		for k, step := range steps {
			b.Logf("%s: %s", step, framesByOwner(frames[k], owners, n))
		}
	}
}

// walLog reads the frames appended to a WAL file since the last read, as transactions (a frame
// with a database size ends one). A checkpoint that restarts the log changes its salt; the
// frames under the new salt are then all new.
type walLog struct {
	path   string
	salt   [2]uint32
	frames int // valid frames seen under salt
}

func (w *walLog) read(b *testing.B) [][]uint32 {
	raw, err := os.ReadFile(w.path)
	if err != nil || len(raw) < 32 {
		b.Fatalf("read WAL: %v (%d bytes)", err, len(raw))
	}
	pageSize := int(binary.BigEndian.Uint32(raw[8:12]))
	salt := [2]uint32{binary.BigEndian.Uint32(raw[16:20]), binary.BigEndian.Uint32(raw[20:24])}
	if salt != w.salt {
		w.salt, w.frames = salt, 0
	}
	var txns [][]uint32
	var current []uint32
	valid := 0
	for off := 32; off+24+pageSize <= len(raw); off += 24 + pageSize {
		h := raw[off : off+24]
		if binary.BigEndian.Uint32(h[8:12]) != salt[0] || binary.BigEndian.Uint32(h[12:16]) != salt[1] {
			break // left over from before the log restarted
		}
		valid++
		if valid <= w.frames {
			continue
		}
		current = append(current, binary.BigEndian.Uint32(h[0:4]))
		if binary.BigEndian.Uint32(h[4:8]) != 0 {
			txns, current = append(txns, current), nil
		}
	}
	w.frames = valid - len(current) // an unfinished transaction is read again next time
	return txns
}

// pageOwners maps page numbers to the table or index holding them, from dbstat on a copy of the
// database and its WAL; nil when the driver was built without it.
func pageOwners(b *testing.B, path string) map[uint32]string {
	dir := b.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(path + suffix)
		if err != nil {
			b.Fatalf("copy database: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "copy.db"+suffix), data, 0o600); err != nil {
			b.Fatalf("copy database: %v", err)
		}
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "copy.db"))
	if err != nil {
		b.Fatalf("open copy: %v", err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT pageno, name FROM dbstat")
	if err != nil {
		return nil // built without -tags sqlite_dbstat
	}
	defer rows.Close()
	owners := map[uint32]string{1: "page 1 (header, schema)"}
	for rows.Next() {
		var page uint32
		var name string
		if err := rows.Scan(&page, &name); err != nil {
			b.Fatalf("read dbstat: %v", err)
		}
		if page != 1 {
			owners[page] = name
		}
	}
	return owners
}

// framesByOwner is "name=frames per fork" for each owner, most frames first.
func framesByOwner(frames []uint32, owners map[uint32]string, forks int) string {
	count := map[string]int{}
	for _, p := range frames {
		name, ok := owners[p]
		if !ok {
			name = "free"
		}
		count[name]++
	}
	names := slices.SortedFunc(maps.Keys(count), func(a, b string) int {
		return cmp.Or(cmp.Compare(count[b], count[a]), strings.Compare(a, b))
	})
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s=%.1f", name, float64(count[name])/float64(forks))
	}
	return strings.Join(parts, " ")
}
