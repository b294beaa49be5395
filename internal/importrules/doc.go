// Package importrules holds the test of the house's import rules (CONVENTIONS.md, "The house"):
// which of forkgraph's packages each layer may depend on, and which infrastructure it must not.
// The rules of the domain, the edge and the stream leaf stay beside their packages
// (forkengine, access and streamside's imports tests); this one table holds the rest. It holds
// tests only.
package importrules
