package access

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultTokenFilePoll is how often a tokens file is checked for changes. A quarter of a second
// keeps "a removed token's streams end within a second" with room to spare, and a stat is cheap.
const DefaultTokenFilePoll = 250 * time.Millisecond

// maxTokenFileBytes bounds a tokens file (about 20,000 lines of hashed tokens).
const maxTokenFileBytes = 4 << 20

// TokenReload says what one reload of a tokens file did, for logs and metrics.
type TokenReload struct {
	Tokens  int      // tokens in the set now in force
	Revoked []string // names of the tokens removed or changed, whose streams were ended
	Err     error    // why the file was refused; the previous set stays in force
}

// TokenFile is a tokens file (ParseTokenFile) kept in force: Reload reads it again and swaps the
// new set in at once, and Watch does so whenever the file changes, so every instance follows its
// copy of the file without a restart. A file that does not parse is refused whole and the set in
// force stays; a reload ends the streams of every token it removed or whose grant it changed
// (TOKEN_REVOKED) and leaves every other client alone.
type TokenFile struct {
	path     string
	fixed    *TokenSet // -tokens, which a file entry must not repeat
	onReload func(TokenReload)

	current atomic.Pointer[TokenSet]
	mu      sync.Mutex // serialises reloads
	stamp   fileStamp
	// changed is the stamp of a change Watch saw at its last poll and has not read yet: it reads
	// a changed file once it has not changed again for one interval (reloadIfChanged).
	changed fileStamp
}

// fileStamp is what Watch compares to notice a change: a rename over the file (how editors and
// configuration tools replace it atomically) changes its identity, an edit in place its size or
// modification time.
type fileStamp struct {
	info os.FileInfo
}

func (s fileStamp) same(info os.FileInfo) bool {
	return s.info != nil && os.SameFile(s.info, info) && s.info.Size() == info.Size() && s.info.ModTime().Equal(info.ModTime())
}

// LoadTokenFile reads path once; an error (unreadable, larger than 4 MiB, not parsing) refuses
// the start. fixed is the -tokens set (may be nil), onReload is told about every later reload
// (may be nil).
func LoadTokenFile(path string, fixed *TokenSet, onReload func(TokenReload)) (*TokenFile, error) {
	f := &TokenFile{path: path, fixed: fixed, onReload: onReload}
	set, stamp, err := f.read()
	if err != nil {
		return nil, err
	}
	f.current.Store(set)
	f.stamp = stamp
	return f, nil
}

// Tokens returns the set in force.
func (f *TokenFile) Tokens() *TokenSet { return f.current.Load() }

// read parses the file as it is now.
func (f *TokenFile) read() (*TokenSet, fileStamp, error) {
	file, err := os.Open(f.path)
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("tokens file: %w", err)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("tokens file: %w", err)
	}
	if info.Size() > maxTokenFileBytes {
		return nil, fileStamp{}, fmt.Errorf("tokens file %s: %d bytes is more than %d", f.path, info.Size(), maxTokenFileBytes)
	}
	data := make([]byte, info.Size())
	if _, err := file.ReadAt(data, 0); err != nil && info.Size() > 0 {
		return nil, fileStamp{}, fmt.Errorf("tokens file: %w", err)
	}
	set, err := ParseTokenFile(data, f.fixed)
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("tokens file %s: %w", f.path, err)
	}
	for _, e := range set.entries {
		e.revoked, e.revoke = context.WithCancel(context.Background())
	}
	return set, fileStamp{info: info}, nil
}

// Reload reads the file again (SIGHUP) and puts it in force; on error the set in force stays and
// the error is returned (and told to onReload).
func (f *TokenFile) Reload() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reloadLocked()
}

func (f *TokenFile) reloadLocked() error {
	next, stamp, err := f.read()
	if err != nil {
		f.stamp = fileStamp{info: stampOf(f.path)} // do not retry the same bad file every poll
		f.report(TokenReload{Tokens: f.current.Load().Len(), Err: err})
		return err
	}
	prev := f.current.Load()
	var revoked []string
	for h, old := range prev.entries {
		if kept, ok := next.entries[h]; ok && old.sameGrant(kept) {
			kept.revoke()
			next.entries[h] = old // the same grant keeps its streams
			continue
		}
		revoked = append(revoked, old.name)
	}
	f.current.Store(next)
	f.stamp = stamp
	for h, old := range prev.entries {
		if next.entries[h] != old {
			old.revoke() // after the swap: a request that races the reload sees the new set or a revoked entry
		}
	}
	f.report(TokenReload{Tokens: next.Len(), Revoked: revoked})
	return nil
}

func (f *TokenFile) report(r TokenReload) {
	if f.onReload != nil {
		f.onReload(r)
	}
}

// stampOf is the file's current stat, nil when it cannot be read.
func stampOf(path string) os.FileInfo {
	info, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return info
}

// Watch reloads the file whenever it changes, checking every interval (<= 0: DefaultTokenFilePoll)
// until ctx ends; a change is read once it has stayed the same for an interval
// (reloadIfChanged). Polling works on every filesystem and platform, inside containers whose
// mounted secrets are swapped by symlink, and costs one stat per interval.
func (f *TokenFile) Watch(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultTokenFilePoll
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			f.reloadIfChanged()
		}
	}
}

// reloadIfChanged reloads the file when it has changed since the last read and not since the
// last poll. A file written in place is truncated and then written: read between the two it is
// empty, a set of no tokens, and applying that revoked every token of the file, ending their
// streams, one poll before the whole file brought them back. So a change is read at the poll
// after the one that saw it, when its stamp has stayed the same for an interval (a write taking
// longer than the interval is read when it pauses that long). A missing file is reported at once.
func (f *TokenFile) reloadIfChanged() {
	info := stampOf(f.path)
	f.mu.Lock()
	defer f.mu.Unlock()
	if info != nil && f.stamp.same(info) {
		f.changed = fileStamp{}
		return
	}
	if info == nil && f.stamp.info == nil {
		return // still missing: reported once already
	}
	if info != nil && !f.changed.same(info) {
		f.changed = fileStamp{info: info} // changed, maybe still being written: read at the next poll if it stays so
		return
	}
	f.changed = fileStamp{}
	_ = f.reloadLocked() // reported to onReload
}
