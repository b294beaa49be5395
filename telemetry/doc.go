// Package telemetry is forkgraph's instrumentation: Prometheus metrics (all named forkgraph_*,
// with bounded label sets), OpenTelemetry tracing configured from the standard OTEL_*
// environment variables, structured request logs, the readiness probe and the build
// description. It observes the other packages from the outside, through the seams they offer:
// a gqlgen extension for GraphQL operations, HTTP middleware, a transports.Observer, decorators
// around forkengine's Driver, Store and Publisher ports, and the resolvers' batch hook. No other
// package imports a metrics or tracing library.
//
// Nothing here ever records a variable, a message's content or a token: labels and log
// attributes are operation names, error codes, provider names, statuses and durations.
package telemetry
