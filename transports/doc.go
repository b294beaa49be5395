// Package transports holds forkgraph's wire protocols as gqlgen transports (graphql.Transport):
//
//   - Websocket: graphql-transport-ws (the graphql-ws project's protocol) and the legacy
//     graphql-ws subprotocol of subscriptions-transport-ws, on github.com/gorilla/websocket, with
//     the protocol's close codes, an init timeout, keep-alive pings, dead-peer detection and a
//     bounded outgoing queue per connection;
//   - SSE: subscriptions and single results over Server-Sent Events in graphql-sse's "distinct
//     connections" mode;
//   - HTTP: GET and POST as the GraphQL-over-HTTP specification describes, with content
//     negotiation between application/graphql-response+json and application/json, and
//     multipart/mixed for queries with @defer.
//
// The websocket and SSE transports end a stream when the credential it was opened with does
// (Lifetime: a JWT's expiry, a revoked token): 4403 with the error's code as the close reason,
// or a last SSE `next` event carrying the error.
//
// Every transport pulls an operation's results through incremental.go, which sends a query with
// @defer in the incremental delivery shape ({data, hasNext}, then {incremental, hasNext}) and
// refuses @defer where gqlgen cannot deliver it.
//
// gqlgen ships transports for all three, but its websocket transport deviates from the
// graphql-transport-ws protocol (close codes, duplicate ids, complete after error) and its HTTP
// transports answer several requests differently from the specification. These are written from
// the protocol documents; docs/transports.md lists every status and close code.
package transports
