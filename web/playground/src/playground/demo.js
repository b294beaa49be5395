// Ids from the demo workspace the server seeds on first start (seed.go), so the example fork works
// without editing: "Refactor the billing module", through its first turn. If the seed changes,
// ListSessions shows the ids to use.
export const DEMO_FORK = { sessionId: 'billing-refactor', turnId: 'billing-refactor-t1' };
