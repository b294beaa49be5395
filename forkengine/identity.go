package forkengine

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// identityNamespace separates forkgraph's derived ids from any other hash of the same strings.
// Changing it changes every derived id, so it is versioned and never edited.
const identityNamespace = "forkgraph.fork.identity.v1"

// newUUIDv4 returns a random RFC 9562 version 4 UUID from crypto/rand.
func newUUIDv4() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand.Read never fails on supported platforms (Go 1.24+ panics inside it instead).
		panic(fmt.Sprintf("forkengine: crypto/rand: %v", err))
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	return formatUUID(b)
}

func formatUUID(b [16]byte) string {
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// digest hashes parts with a separator that cannot occur in ids (NUL), so ("ab","c") and
// ("a","bc") never collide.
func digest(parts ...string) [32]byte {
	return sha256.Sum256([]byte(strings.Join(parts, "\x00")))
}

// derivedTargetID picks the target session id of a fork request that named none. It depends only
// on (workspace, request id), so a replayed request derives the same target and the same request
// hash. The result is UUID-shaped (version 8, the RFC 9562 custom version).
func derivedTargetID(workspaceID, requestID string) string {
	sum := digest(identityNamespace, "target", workspaceID, requestID)
	var b [16]byte
	copy(b[:], sum[:16])
	b[6] = b[6]&0x0f | 0x80 // version 8
	b[8] = b[8]&0x3f | 0x80
	return formatUUID(b)
}

// forkIDs mints the deterministic ids of the entities a fork target copies (kind "turn" or
// "message"): "f<operation prefix><t|m><entity hash>", each part 64 bits in unpadded base64url
// (11 characters; 24 in all). The entity hash covers (workspace, operation, source, target, kind,
// source id), so ids are isolated per operation and two forks of the same turn never share one,
// while a repeated commit of one operation always produces the same ones. The prefix depends on
// the operation alone, so every row one commit inserts sorts into one contiguous run of each
// index instead of a random page per row (random ids made a 120-row commit dirty hundreds of
// b-tree pages). The prefix is hashed once per operation, turn ids once per turn.
//
// 64 bits of entity hash are enough: ids only need to differ within one operation's prefix (a
// few thousand entities: a collision chance near 10^-13), and two operations share a prefix and
// an entity hash only by two independent 64-bit coincidences. Each copied message stores its id
// and its turn's id and both are indexed, so short ids are a large part of a fork's bytes: these
// save about 15 KB per 100-message fork against the earlier "fork-<16 hex>-message-<32 hex>"
// (62 characters; 59 for a turn). Forks committed before keep their ids; nothing parses them.
type forkIDs struct {
	prefix string
	turns  map[string]string
	// input holds digest's input for an entity id up to the kind: the parts every id of the
	// operation shares, so a commit's 120 ids are hashed without joining the parts each time.
	input  []byte
	shared int
}

func newForkIDs(op ForkOperation) *forkIDs {
	sum := digest(identityNamespace, "prefix", op.WorkspaceID, op.ID, op.SourceSessionID, op.TargetSessionID)
	f := &forkIDs{prefix: "f" + base64.RawURLEncoding.EncodeToString(sum[:8]), turns: map[string]string{}}
	for _, part := range []string{identityNamespace, op.WorkspaceID, op.ID, op.SourceSessionID, op.TargetSessionID} {
		f.input = append(append(f.input, part...), 0)
	}
	f.shared = len(f.input)
	return f
}

// id is f.prefix, the kind's initial and 64 bits of digest(identityNamespace, workspace,
// operation, source, target, kind, sourceID), built in one allocation.
func (f *forkIDs) id(kind, sourceID string) string {
	f.input = append(append(append(f.input[:f.shared], kind...), 0), sourceID...)
	sum := sha256.Sum256(f.input)
	const hashLen = 11 // 8 bytes in unpadded base64url
	out := make([]byte, 0, len(f.prefix)+1+hashLen)
	out = append(append(out, f.prefix...), kind[0])
	return string(base64.RawURLEncoding.AppendEncode(out, sum[:8]))
}

// turn is the copy's id of source turn sourceID.
func (f *forkIDs) turn(sourceID string) string {
	id, ok := f.turns[sourceID]
	if !ok {
		id = f.id("turn", sourceID)
		f.turns[sourceID] = id
	}
	return id
}

// message is the copy's id of source message sourceID.
func (f *forkIDs) message(sourceID string) string { return f.id("message", sourceID) }

// interaction is the child's id of the source interaction of (turnID, requestID): the
// reference keys an interaction by both, joined by a NUL no id can hold.
func (f *forkIDs) interaction(turnID, requestID string) string {
	return f.id("interaction", turnID+"\x00"+requestID)
}

// historyKey is the target's History.Key: the operation's prefix without its "f", 64 bits that
// depend on the operation alone, so a repeated commit derives the same key and the same
// presented ids.
func (f *forkIDs) historyKey() string { return f.prefix[1:] }

// requestBody is the canonical body of a fork request. The request id is deliberately not part of
// it: the hash answers "is this the same request?" for two calls that share a request id.
type requestBody struct {
	WorkspaceID     string `json:"workspaceId"`
	SourceSessionID string `json:"sourceSessionId"`
	TargetSessionID string `json:"targetSessionId"`
	ThroughTurnID   string `json:"throughTurnId"`
	// Target is the frozen part of the target input; absent when it freezes nothing, so the
	// hash of a request without one is what it was before targets existed.
	Target *TargetInput `json:"target,omitempty"`
}

// requestHash is the sha256 hex of the canonical JSON request body.
func requestHash(in ForkInput) string {
	body := requestBody{WorkspaceID: in.WorkspaceID, SourceSessionID: in.SourceSessionID,
		TargetSessionID: in.TargetSessionID, ThroughTurnID: in.ThroughTurnID}
	if in.Target.frozen() {
		body.Target = in.Target
	}
	encoded, err := json.Marshal(body)
	if err != nil {
		// strings, booleans and JSON values cleanTarget made canonical always marshal
		panic(fmt.Sprintf("forkengine: marshal request body: %v", err))
	}
	sum := sha256.Sum256(encoded)
	return hex.EncodeToString(sum[:])
}

// jsonSnapshotHash is the sha256 hex of the snapshot's JSON encoding: the hash of operations
// prepared before snapshotHash (they carry no version prefix). Commit still verifies them with it.
func jsonSnapshotHash(s Snapshot) (string, error) {
	body, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode snapshot: %w", err)
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:]), nil
}
