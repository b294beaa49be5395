package forkengine

import (
	"fmt"
	"strings"
)

// TurnOrigin says where a turn's prompt came from: the closed set of reference §1.2.
type TurnOrigin string

// Turn origins. OriginLegacyUnknown is also what a turn stored with free text before the set
// was closed reads as.
const (
	OriginUserPrompt        TurnOrigin = "user_prompt"
	OriginGoalArm           TurnOrigin = "goal_arm"
	OriginGoalContinuation  TurnOrigin = "goal_continuation"
	OriginProviderInitiated TurnOrigin = "provider_initiated"
	OriginLegacyUnknown     TurnOrigin = "legacy_unknown"
)

// Valid reports whether o is one of the closed set.
func (o TurnOrigin) Valid() bool {
	switch o {
	case OriginUserPrompt, OriginGoalArm, OriginGoalContinuation, OriginProviderInitiated, OriginLegacyUnknown:
		return true
	}
	return false
}

// OriginKind is t's origin in the closed set: "" when none was reported, legacy_unknown for free
// text stored before the set was closed.
func (t Turn) OriginKind() TurnOrigin {
	switch o := TurnOrigin(t.Origin); {
	case o == "":
		return ""
	case o.Valid():
		return o
	}
	return OriginLegacyUnknown
}

// ReasonUnknownTurnOrigin marks a report whose origin is not in the closed set.
const ReasonUnknownTurnOrigin = "unknown_turn_origin"

// TurnError is how a turn failed, as the runtime reported it.
type TurnError struct {
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
}

// FileChangeKind is what a turn did to a file.
type FileChangeKind string

// File change kinds.
const (
	FileAdded    FileChangeKind = "add"
	FileModified FileChangeKind = "modify"
	FileDeleted  FileChangeKind = "delete"
	FileRenamed  FileChangeKind = "rename"
)

// FileChange is one file a turn changed. PreviousPath is set exactly for a rename.
type FileChange struct {
	Path         string         `json:"path"`
	Kind         FileChangeKind `json:"kind"`
	PreviousPath string         `json:"previousPath,omitempty"`
}

// CompletedCommand is the command a turn ran to completion, with its exit code when known.
type CompletedCommand struct {
	Command  string `json:"command"`
	ExitCode *int   `json:"exitCode,omitempty"`
}

// MaxFileChanges bounds the file changes of one turn.
const MaxFileChanges = 1000

// ReasonInvalidTurnDetail marks a report whose error, file changes or completed command break
// their rules (a required field empty, an unknown kind, a rename without its previous path).
const ReasonInvalidTurnDetail = "invalid_turn_detail"

// cleanOrigin folds a reported origin to its stored form (the reference's lower-case value; the
// GraphQL enum's upper-case names are accepted too). Errors: BAD_USER_INPUT reason
// unknown_turn_origin.
func cleanOrigin(origin *string) error {
	if origin == nil {
		return nil
	}
	o := TurnOrigin(strings.ToLower(*origin))
	if !o.Valid() {
		return ReasonErrorf(CodeInvalid, ReasonUnknownTurnOrigin,
			"origin %q is not one of user_prompt, goal_arm, goal_continuation, provider_initiated, legacy_unknown", *origin)
	}
	*origin = string(o)
	return nil
}

// cleanTurnDetails checks a report's error, file changes and completed command. Errors:
// BAD_USER_INPUT reasons invalid_turn_detail, invalid_text.
func cleanTurnDetails(in *TurnReport) error {
	bad := func(format string, args ...any) error {
		return ReasonErrorf(CodeInvalid, ReasonInvalidTurnDetail, format, args...)
	}
	if e := in.Error; e != nil {
		if e.Code == "" {
			return bad("error.code is required")
		}
		if err := checkTexts(map[string]*string{"error.code": &e.Code, "error.message": &e.Message}); err != nil {
			return err
		}
	}
	if c := in.CompletedCommand; c != nil {
		if c.Command == "" {
			return bad("completedCommand.command is required")
		}
		if err := checkTexts(map[string]*string{"completedCommand.command": &c.Command}); err != nil {
			return err
		}
	}
	if in.FileChanges == nil {
		return nil
	}
	changes := *in.FileChanges
	if len(changes) > MaxFileChanges {
		return bad("at most %d file changes (got %d)", MaxFileChanges, len(changes))
	}
	for i, fc := range changes {
		field := fmt.Sprintf("fileChanges[%d]", i)
		switch {
		case fc.Path == "":
			return bad("%s.path is required", field)
		case fc.Kind != FileAdded && fc.Kind != FileModified && fc.Kind != FileDeleted && fc.Kind != FileRenamed:
			return bad("%s.kind %q is not add, modify, delete or rename", field, fc.Kind)
		case (fc.Kind == FileRenamed) != (fc.PreviousPath != ""):
			return bad("%s.previousPath is given exactly for a rename", field)
		}
		if err := checkTexts(map[string]*string{field + ".path": &fc.Path, field + ".previousPath": &fc.PreviousPath}); err != nil {
			return err
		}
	}
	if len(changes) == 0 {
		empty := []FileChange{}
		in.FileChanges = &empty
	}
	return nil
}

// applyTurnDetails writes the reported details onto t.
func applyTurnDetails(t *Turn, in TurnReport) {
	if in.Error != nil {
		e := *in.Error
		t.Error = &e
	}
	if in.FileChanges != nil {
		t.FileChanges = append([]FileChange{}, *in.FileChanges...)
	}
	if in.CompletedCommand != nil {
		c := *in.CompletedCommand
		t.CompletedCommand = &c
	}
}

// sameTurnDetails compares the details of two turns.
func sameTurnDetails(a, b Turn) bool {
	if (a.Error == nil) != (b.Error == nil) || (a.Error != nil && *a.Error != *b.Error) {
		return false
	}
	ac, bc := a.CompletedCommand, b.CompletedCommand
	if (ac == nil) != (bc == nil) || (ac != nil && (ac.Command != bc.Command || !sameIntPtr(ac.ExitCode, bc.ExitCode))) {
		return false
	}
	if len(a.FileChanges) != len(b.FileChanges) {
		return false
	}
	for i := range a.FileChanges {
		if a.FileChanges[i] != b.FileChanges[i] {
			return false
		}
	}
	return true
}

func sameIntPtr(a, b *int) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// cloneTurnDetails gives t its own copies of its details, so a clone shares no memory.
func cloneTurnDetails(t *Turn) {
	if t.Error != nil {
		e := *t.Error
		t.Error = &e
	}
	if t.FileChanges != nil {
		t.FileChanges = append([]FileChange{}, t.FileChanges...)
	}
	if t.CompletedCommand != nil {
		c := *t.CompletedCommand
		if c.ExitCode != nil {
			code := *c.ExitCode
			c.ExitCode = &code
		}
		t.CompletedCommand = &c
	}
}
