package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// state is everything the adapter must not forget, and all the state file holds. Losing any of
// it would make an answer a lie: a forgotten child makes /reconcile say absent about a fork that
// happened; a forgotten tombstone lets a late /fork make a child after absent was said.
type state struct {
	// Sessions are the provider sessions this adapter made, by provider session id; each belongs to
	// the workspace it was made for.
	Sessions map[string]providerSession `json:"sessions"`
	// Roots are the provider sessions this adapter did not make (the conversations the agent
	// runtime started), each owned by the first workspace that forked it: provider session id →
	// workspace id. A real provider knows whose every session is; this one learns it on first use.
	Roots map[string]string `json:"roots"`
	// Requests holds, per workspace and fork request id, what the adapter answered for it.
	Requests map[string]map[string]requestRecord `json:"requests"`
	// Turns is the provider's history: per provider session id, the turns submitted to it
	// (POST /submit), in order. /recover-binding reads it, and nothing else writes it.
	Turns map[string][]providerTurn `json:"turns"`
	// Resumes counts, per provider session id, the resumes /resume let through.
	Resumes map[string]int `json:"resumes"`
}

// providerTurn is one prompt the provider received. A real provider keeps the whole transcript;
// this one keeps what finding a turn again by its proof needs: the runtime's submit id and, for a
// plain-text prompt, the text.
type providerTurn struct {
	ID             string    `json:"id"`
	WorkspaceID    string    `json:"workspaceId"`
	ClientSubmitID string    `json:"clientSubmitId,omitempty"`
	Content        string    `json:"content"`
	Text           string    `json:"text,omitempty"`
	SubmittedAt    time.Time `json:"submittedAt"`
}

// owner is the workspace a provider session belongs to, or "" when no workspace has used it yet.
func (s state) owner(providerSessionID string) string {
	if made, ok := s.Sessions[providerSessionID]; ok {
		return made.WorkspaceID
	}
	return s.Roots[providerSessionID]
}

// providerSession is a child the adapter made by forking a provider session through a turn.
type providerSession struct {
	ID                    string    `json:"id"`
	ParentID              string    `json:"parentId"`
	ThroughProviderTurnID string    `json:"throughProviderTurnId"`
	PrefixTurns           int       `json:"prefixTurns"`
	Title                 string    `json:"title"`
	WorkspaceID           string    `json:"workspaceId"`
	RequestID             string    `json:"requestId"`
	OperationID           string    `json:"operationId"`
	CreatedAt             time.Time `json:"createdAt"`
	// The child's settings and context as forkgraph froze them; a real provider starts the
	// child's agent with them (and with the request's environment, which it keeps nowhere).
	Model           string          `json:"model,omitempty"`
	Cwd             string          `json:"cwd,omitempty"`
	Settings        json.RawMessage `json:"settings,omitempty"`
	PreparedContext json.RawMessage `json:"preparedContext,omitempty"`
}

// Request outcomes.
const (
	outcomeForked = "forked" // a child exists: ChildID
	outcomeAbsent = "absent" // a tombstone: /reconcile said absent, so /fork must refuse it forever
)

// requestRecord is what became of one fork request id.
type requestRecord struct {
	OperationID string `json:"operationId"`
	Outcome     string `json:"outcome"`
	ChildID     string `json:"childProviderSessionId,omitempty"`
	// ForkDeliveries counts /fork requests received for this id (1 unless it was resent).
	ForkDeliveries int `json:"forkDeliveries"`
	// Reconciles counts /reconcile requests received for this id.
	Reconciles int       `json:"reconciles"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

func (s state) request(workspaceID, requestID string) (requestRecord, bool) {
	r, ok := s.Requests[workspaceID][requestID]
	return r, ok
}

func (s *state) setRequest(workspaceID, requestID string, r requestRecord) {
	if s.Requests[workspaceID] == nil {
		s.Requests[workspaceID] = map[string]requestRecord{}
	}
	s.Requests[workspaceID][requestID] = r
}

// stateFile is the state and the file that keeps it. Every change is written to a temporary file
// in the same directory, synced and renamed over the file (then the directory is synced), so a
// crash at any point leaves either the old state or the new one, never half of each.
type stateFile struct {
	path string
	mu   sync.Mutex
	st   state
}

// openState loads the state at path; a missing file is an empty state. An unreadable or corrupt
// file is an error: starting empty over it would forget children and tombstones.
func openState(path string) (*stateFile, error) {
	f := &stateFile{path: path, st: state{Sessions: map[string]providerSession{}, Roots: map[string]string{},
		Requests: map[string]map[string]requestRecord{}, Turns: map[string][]providerTurn{}, Resumes: map[string]int{}}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &f.st); err != nil {
		return nil, fmt.Errorf("state %s is corrupt (not starting, so that nothing is forgotten): %w", path, err)
	}
	if f.st.Sessions == nil {
		f.st.Sessions = map[string]providerSession{}
	}
	if f.st.Requests == nil {
		f.st.Requests = map[string]map[string]requestRecord{}
	}
	if f.st.Roots == nil { // a state file from before roots had owners
		f.st.Roots = map[string]string{}
	}
	if f.st.Turns == nil {
		f.st.Turns = map[string][]providerTurn{} // a state file from before the history
	}
	if f.st.Resumes == nil {
		f.st.Resumes = map[string]int{}
	}
	return f, nil
}

// update runs change on a copy of the state and, when it returns nil, makes the copy durable and
// current. Calls are serialised, so a /fork and a /reconcile for one request id cannot interleave.
// If writing fails the state stays as it was and the error is returned.
func (f *stateFile) update(change func(*state) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	next, err := f.st.clone()
	if err != nil {
		return err
	}
	if err := change(&next); err != nil {
		return err
	}
	if err := writeAtomically(f.path, next); err != nil {
		return err
	}
	f.st = next
	return nil
}

// read runs look on the current state under the lock.
func (f *stateFile) read(look func(*state)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	look(&f.st)
}

func (s state) clone() (state, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return state{}, fmt.Errorf("copy state: %w", err)
	}
	var out state
	if err := json.Unmarshal(data, &out); err != nil {
		return state{}, fmt.Errorf("copy state: %w", err)
	}
	return out, nil
}

// writeAtomically replaces path with st: temp file, fsync, rename, fsync of the directory.
func writeAtomically(path string, st state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write state: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("sync state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace state: %w", err)
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync state directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync state directory: %w", err)
	}
	return nil
}
