package forkengine

// Shareable reports whether every subscriber that follows a workspace from this position gets
// the same stream from the moment it joins, and so may share the work of presenting each event
// with the others: a live-only position (Resume false) does, since each subscriber gets exactly
// the events published while it is subscribed, in publish order, and nothing of its own. A
// resumed position does not: it replays the log from its own cursor first. (An operation stream,
// FollowOperation, never is: it starts with the state the operation is in when its subscriber
// joins.) Sharing never changes what a subscriber is sent; its own stream still ends it, with
// RESUME_REQUIRED when it falls behind.
func (p WorkspacePosition) Shareable() bool { return !p.Resume }
