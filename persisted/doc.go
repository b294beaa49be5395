// Package persisted serves GraphQL operations named by hash instead of sent in full, as a gqlgen
// handler extension that runs before any other: it fills in a request's document, or refuses it
// with a code, before the document is parsed, limited and validated.
//
//   - Automatic persisted queries (Apollo APQ): a request whose extensions.persistedQuery names a
//     sha256Hash without a query is answered from a bounded cache, or refused with
//     PERSISTED_QUERY_NOT_FOUND so the client sends the document with its hash once; such a
//     document is remembered only once it runs: after validation and every limit accepted it.
//     The cache is partitioned by client (Options.Client): a hash names a document only for
//     the client that registered it, and a client filling the cache evicts its own documents.
//   - Trusted documents: with a manifest (the JSON object of hash → document that Relay's
//     persisted queries and GraphQL Code Generator's client preset write, or Apollo's persisted
//     query manifest), only the manifest's documents run, named by documentId or by
//     extensions.persistedQuery.sha256Hash; anything else is TRUSTED_DOCUMENT_REQUIRED or
//     TRUSTED_DOCUMENT_NOT_FOUND.
//
// The transports pass a request's documentId (or Relay's doc_id) on in
// extensions["documentId"] and accept a request without a query when it names a document.
package persisted
