module github.com/forkgraph/forkgraph/examples/go-client

go 1.26.8

tool github.com/Khan/genqlient

require (
	github.com/Khan/genqlient v0.8.1
	github.com/gorilla/websocket v1.5.3
)

require (
	github.com/agnivade/levenshtein v1.1.1 // indirect
	github.com/alexflint/go-arg v1.5.1 // indirect
	github.com/alexflint/go-scalar v1.2.0 // indirect
	github.com/bmatcuk/doublestar/v4 v4.6.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/vektah/gqlparser/v2 v2.5.19 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
)
