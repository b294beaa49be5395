// Ids from the demo workspace the server seeds on first start (server.go), so the example fork
// works without editing. If the seed changes, ListSessions shows the ids to use.
export const DEMO_FORK = { sessionId: 'SEED-SESSION-ID', turnId: 'SEED-TURN-ID' };
