package dbtemplate

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

func TestCopyMakesTheTemplateOncePerKey(t *testing.T) {
	t.Parallel()
	key := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	var made atomic.Int32
	create := func(path string) error {
		made.Add(1)
		return os.WriteFile(path, []byte("migrated"), 0o600)
	}
	for range 3 {
		path := Copy(t, key, t.TempDir(), "x.db", create)
		if data, err := os.ReadFile(path); err != nil || string(data) != "migrated" {
			t.Fatalf("the copy holds %q (%v), want the template's bytes", data, err)
		}
	}
	if n := made.Load(); n != 1 {
		t.Fatalf("the template was made %d times, want once", n)
	}
}

func TestCopyWithAFailedTemplateFails(t *testing.T) {
	t.Parallel()
	tpl := &template{}
	templates.Store("broken", tpl)
	tpl.once.Do(func() { tpl.files, tpl.err = build(func(string) error { return errors.New("boom") }) })
	if tpl.err == nil || tpl.err.Error() != "boom" {
		t.Fatalf("build of a failing create = %v, want its error", tpl.err)
	}
}
