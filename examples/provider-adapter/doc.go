// Command provider-adapter is the reference provider adapter for forkgraph's webhook driver: a
// small standalone program, standard library only, that implements the whole webhook protocol
// (POST /describe, /probe, /fork, /reconcile and /recover-binding; see docs/providers.md). Copy it and replace the
// making of the child in recordFork with a call to your provider. Here the child and its record
// are one atomic write; a real provider's fork is not, so record the request as pending before
// calling it, pass the request id to the provider as its idempotency key, record the child after,
// and let /reconcile answer unknown for a pending request until the provider (asked by request
// id) can say found or absent.
//
//	go run ./examples/provider-adapter -addr 127.0.0.1:9100 -state adapter.json
//	go run . -webhook-url http://127.0.0.1:9100   # forkgraph, with provider "webhook"
//
// What makes it trustworthy is its state file (-state), rewritten atomically (temp file, fsync,
// rename) on every change, so a restart keeps everything:
//
//   - /fork is idempotent on the request id: the child is recorded before /fork answers, and a
//     repeated /fork for the same request id gets the same child back;
//   - /reconcile answers found with that child, and never forks;
//   - for a request id it never saw, /reconcile answers absent only after durably writing a
//     tombstone, so a /fork for that request id arriving later is refused (rejected), and absent
//     stays true.
//
// A provider session belongs to one workspace: the children it made are the workspace's they were
// made for, and a root session (one the agent runtime started) is the first workspace's that forks
// it. /fork (403, rejected), /probe (false) and /reconcile (403, unknown) of another workspace's
// provider session are refused, so no workspace can copy another's conversation.
//
// It describes every session as host_copy: forkgraph copies the transcript from its frozen
// snapshot and the child keeps the source's turn bindings, so the adapter has only one thing to
// make and remember per fork, the child's provider session id. provider_owned would also have it
// mint a turn binding per turn and a receipt, store them, and report them again on /reconcile.
//
// It also plays the provider a runtime talks to: POST /submit records a prompt in a provider
// session's history and answers with the provider turn id and binding the runtime reports to
// forkgraph. /recover-binding finds a turn whose binding forkgraph lost in that history, read-only,
// by the proof forkgraph recorded at submit: the client submit id first, else the HMAC of a
// plain-text prompt under the key forkgraph sends, compared with each plain-text prompt of the
// history; exactly one match is found, more are ambiguous, never is a turn picked by position. A
// provider session made by /fork holds its parent's history up to the turn it was forked through.
//
// POST /resume is a runtime resuming a session, with the check forkgraph's reference makes first:
// started with -forkgraph-url (and -forkgraph-token), it asks forkgraph's verifyForkedSession and
// resumes only a session that verifies, or is no fork, as its own provider session; anything
// else, a forkgraph it cannot ask included, fails closed.
//
// -fork-delay (for tests) makes /fork wait after recording the child and before answering, so a
// fork in flight can be observed, or the adapter killed during it.
package main
