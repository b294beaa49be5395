package models

import "strings"

// NodeType is the GraphQL type a global id names: the first part of the id.
type NodeType string

// The types that implement Node. A Lineage's local id is its fork operation's id.
const (
	NodeSession       NodeType = "Session"
	NodeTurn          NodeType = "Turn"
	NodeMessage       NodeType = "Message"
	NodeForkOperation NodeType = "ForkOperation"
	NodeLineage       NodeType = "Lineage"
	NodeInteraction   NodeType = "Interaction"
	NodeAuditMessage  NodeType = "AuditMessage"
)

// Known reports whether t is one of the Node types.
func (t NodeType) Known() bool {
	switch t {
	case NodeSession, NodeTurn, NodeMessage, NodeForkOperation, NodeLineage, NodeInteraction, NodeAuditMessage:
		return true
	}
	return false
}

// GlobalRef is what a global id names: a type, a workspace and the id unique in that workspace.
type GlobalRef struct {
	Type        NodeType
	WorkspaceID string
	LocalID     string
}

// GlobalID is the id of Node: "<Type>:<workspaceId>:<localId>", with "%" written "%25" and ":"
// written "%3A" in the workspace and local parts, so every pair of ids round-trips and the same
// local id in two workspaces gives two ids. It is readable, but clients must treat it as opaque.
func GlobalID(t NodeType, workspaceID, localID string) string {
	ws, local := escapeIDPart(workspaceID), escapeIDPart(localID)
	var b strings.Builder
	b.Grow(len(t) + len(ws) + len(local) + 2)
	b.WriteString(string(t))
	b.WriteByte(':')
	b.WriteString(ws)
	b.WriteByte(':')
	b.WriteString(local)
	return b.String()
}

// String returns the global id of the reference.
func (r GlobalRef) String() string { return GlobalID(r.Type, r.WorkspaceID, r.LocalID) }

// ParseGlobalID decodes a global id. ok is false unless id has exactly the form GlobalID writes:
// a known type, two non-empty parts, and no "%" other than the escapes "%25" and "%3A". Anything
// else is not a global id (the API then reads it as a local id, see resolvers).
func ParseGlobalID(id string) (GlobalRef, bool) {
	typ, rest, ok := strings.Cut(id, ":")
	if !ok || !NodeType(typ).Known() {
		return GlobalRef{}, false
	}
	ws, local, ok := strings.Cut(rest, ":")
	if !ok || ws == "" || local == "" || strings.Contains(local, ":") {
		return GlobalRef{}, false
	}
	ws, okWS := unescapeIDPart(ws)
	local, okLocal := unescapeIDPart(local)
	if !okWS || !okLocal {
		return GlobalRef{}, false
	}
	return GlobalRef{Type: NodeType(typ), WorkspaceID: ws, LocalID: local}, true
}

func escapeIDPart(s string) string {
	if !strings.ContainsAny(s, "%:") {
		return s // the common case: no allocation
	}
	return idEscaper.Replace(s)
}

var idEscaper = strings.NewReplacer("%", "%25", ":", "%3A")

// unescapeIDPart undoes escapeIDPart; ok is false for any other use of "%", so exactly one
// string encodes each part.
func unescapeIDPart(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "%25"):
			b.WriteByte('%')
		case strings.HasPrefix(s[i:], "%3A"):
			b.WriteByte(':')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// The global ids of the API views: what their `id` field shows. They are computed when selected,
// from fields the view holds anyway, so a view costs nothing more to build.

// ID returns the session's global id.
func (s *Session) ID() string { return GlobalID(NodeSession, s.WorkspaceID, s.LocalID) }

// ID returns the turn's global id.
func (t *Turn) ID() string { return GlobalID(NodeTurn, t.WorkspaceID, t.LocalID) }

// ID returns the message's global id.
func (m *Message) ID() string { return GlobalID(NodeMessage, m.WorkspaceID, m.LocalID) }

// ID returns the operation's global id.
func (op *ForkOperation) ID() string {
	return GlobalID(NodeForkOperation, op.WorkspaceID, op.LocalID)
}

// ID returns the lineage's global id; its local part is the fork operation's id.
func (l *Lineage) ID() string { return GlobalID(NodeLineage, l.WorkspaceID, l.OperationID) }
