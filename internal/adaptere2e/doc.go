// Package adaptere2e runs forkgraph against the reference provider adapter
// (examples/provider-adapter) as real processes on loopback: the server built from the repository
// root, with -webhook-url pointing at the adapter, which is killed with SIGKILL and restarted on
// the same state file and port. It holds tests only; it lives apart from the example so that the
// example stays a program an adapter author can copy out of the repository on its own.
package adaptere2e
