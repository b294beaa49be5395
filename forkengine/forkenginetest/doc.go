// Package forkenginetest holds what tests of forkengine and of its Store implementations share:
//
//   - MemStore, an in-memory forkengine.Store with the SQL store's rules (unique indexes, foreign
//     keys, transactions that commit or leave nothing), for fast engine tests;
//   - RunStoreTests, the contract suite every Store implementation passes (MemStore here, the
//     SQLite and PostgreSQL stores in package store), so the fake cannot drift from the real thing.
package forkenginetest
