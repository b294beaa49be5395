package models

import (
	"encoding/json"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The API views of typed message parts and a turn's details, and the inputs that report them.

// partsFrom is the API view of m's parts: its typed parts, or a plain message's one TextPart.
func partsFrom(m forkengine.Message) []MessagePart {
	parts := m.ContentParts()
	out := make([]MessagePart, len(parts))
	for i, p := range parts {
		switch p.Kind {
		case forkengine.PartText:
			out[i] = TextPart{Text: p.Text}
		case forkengine.PartReasoning:
			out[i] = ReasoningPart{Text: p.Text}
		case forkengine.PartToolCall:
			call := ToolCallPart{CallID: p.CallID, Name: p.Name}
			if len(p.Input) > 0 {
				call.Input = JSON(p.Input)
			}
			out[i] = call
		case forkengine.PartToolResult:
			out[i] = ToolResultPart{CallID: p.CallID, Output: p.Output, IsError: p.IsError}
		case forkengine.PartAttachment:
			out[i] = AttachmentPart{AttachmentID: p.AttachmentID, FileName: optionalOut(p.Name), MediaType: optionalOut(p.MediaType)}
		}
	}
	return out
}

func optionalOut(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// turnDetailsFrom are the API views of t's error, file changes and completed command.
func turnDetailsFrom(t forkengine.Turn) (*TurnError, []*FileChange, *CompletedCommand) {
	var e *TurnError
	if t.Error != nil {
		e = &TurnError{Code: t.Error.Code, Message: optionalOut(t.Error.Message)}
	}
	changes := make([]*FileChange, len(t.FileChanges))
	for i, fc := range t.FileChanges {
		changes[i] = &FileChange{Path: fc.Path, Kind: wire[FileChangeKind](fc.Kind), PreviousPath: optionalOut(fc.PreviousPath)}
	}
	var c *CompletedCommand
	if t.CompletedCommand != nil {
		c = &CompletedCommand{Command: t.CompletedCommand.Command, ExitCode: t.CompletedCommand.ExitCode}
	}
	return e, changes, c
}

// domainParts are the engine's parts of a message input (nil: a plain message).
func domainParts(in []*MessagePartInput) []forkengine.MessagePart {
	if in == nil {
		return nil
	}
	out := make([]forkengine.MessagePart, len(in))
	for i, p := range in {
		part := forkengine.MessagePart{Kind: domain[forkengine.PartKind](p.Kind)}
		for dst, src := range map[*string]*string{&part.Text: p.Text, &part.CallID: p.CallID, &part.Name: p.Name,
			&part.Output: p.Output, &part.AttachmentID: p.AttachmentID, &part.MediaType: p.MediaType} {
			if src != nil {
				*dst = *src
			}
		}
		if len(p.Input) > 0 && string(p.Input) != "null" {
			part.Input = json.RawMessage(p.Input)
		}
		if p.IsError != nil {
			part.IsError = *p.IsError
		}
		out[i] = part
	}
	return out
}

// domainTurnDetails sets the engine's details of a turn report from the input.
func (in ReportTurnInput) domainTurnDetails(report *forkengine.TurnReport) {
	if e := in.Error; e != nil {
		report.Error = &forkengine.TurnError{Code: e.Code}
		if e.Message != nil {
			report.Error.Message = *e.Message
		}
	}
	if in.FileChanges != nil {
		changes := make([]forkengine.FileChange, len(in.FileChanges))
		for i, fc := range in.FileChanges {
			changes[i] = forkengine.FileChange{Path: fc.Path, Kind: domain[forkengine.FileChangeKind](fc.Kind)}
			if fc.PreviousPath != nil {
				changes[i].PreviousPath = *fc.PreviousPath
			}
		}
		report.FileChanges = &changes
	}
	if c := in.CompletedCommand; c != nil {
		report.CompletedCommand = &forkengine.CompletedCommand{Command: c.Command, ExitCode: c.ExitCode}
	}
}
