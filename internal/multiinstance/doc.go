// Package multiinstance proves that several forkgraph server processes can share one PostgreSQL
// database (issue 8, SPEC §7): forks started on one instance are followed on another, a killed
// instance's forks are taken over after their lease with at most one provider call each, and
// every instance's subscribers see the same events in cursor order as a replay of the log.
//
// The tests build the real server once, start real processes on loopback addresses, kill them
// with SIGKILL, and drive them over HTTP and graphql-transport-ws websockets. Provider calls are
// counted by a webhook adapter that runs inside the test process (Adapter), which is never
// killed, so its counts are the provider's truth.
//
// The helpers are exported so that the benchmarks in bench/ can drive instances the same way.
// The tests need FORKGRAPH_TEST_POSTGRES_DSN (scripts/start-postgres.sh prints it); without it
// they skip, except under CI=true, where they fail.
package multiinstance
