// Package playground serves forkgraph's browser front end: an offline GraphiQL playground and a
// session-graph explorer, both built from the sources in this directory into dist/ and embedded
// with go:embed, so the server needs no Node and the browser loads nothing from outside the machine.
//
// Rebuild the assets after changing src/, package.json or package-lock.json:
//
//	npm --prefix web/playground ci && npm --prefix web/playground run build
//
// The build writes dist/build-manifest.json with a sha256 over the sources and the lockfile; a Go
// test recomputes it and fails when the committed dist/ is stale.
//
// Handler serves index.html with the GraphQL endpoint injected into a meta tag, and every other
// file from dist/ with an explicit content type. Files under assets/ carry a content hash in their
// names and are cached forever; everything else must be revalidated.
package playground
