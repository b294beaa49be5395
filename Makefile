# forkgraph: the two commands are `go run .` (serve) and `make test` (everything below).
# `make test` runs every suite: Go (race detector on), the generated-code check, the schema lint and
# breaking-change check (tools/schema/, Node), the Node end-to-end
# suite against the real server, the TypeScript client's suite (clients/typescript/), the
# playground's browser tests in headless Chromium, and the store contract suite and the
# multi-instance suite against PostgreSQL when its server binaries are on the machine.

SHELL := /bin/bash
GO ?= go

.PHONY: check-code test test-stages schema-checks test-go-all check staticcheck generate-check lint-schema schema-changes test-go test-go-client test-postgres test-e2e test-client test-browser test-server-bin generate run build fuzz

# make test runs its stages concurrently: on two cores the Go suite is CPU-bound while the Node,
# browser and PostgreSQL suites mostly wait on processes, Chromium and the database. The
# generated-code check goes first and alone (it rewrites graph/ in place, which a concurrent
# build must not read half-written); then every other stage runs at once, each stage's output
# printed whole when it ends (--output-sync), every stage run even when one fails (-k), and make
# test fails when any did. TEST_JOBS=1 runs them one after another.
TEST_JOBS ?= 8
test: generate-check
	@echo "make test: running its stages concurrently; each stage's output appears when it ends"
	@$(MAKE) --no-print-directory -k -j$(TEST_JOBS) --output-sync=target test-stages
	@echo "make test: all suites passed"

test-stages: check schema-checks test-go-all test-go-client test-e2e test-client test-browser

# The two schema checks share tools/schema's npm ci, so they run one after the other.
schema-checks:
	@bash scripts/stage.sh "schema lint" bash scripts/run-optional.sh "schema lint (graphql-schema-linter)" scripts/lint-schema.sh
	@bash scripts/stage.sh "schema changes" bash scripts/run-optional.sh "breaking schema change check" scripts/check-schema-changes.sh

# Every Go package once with -race, the PostgreSQL tests in the same run (scripts/test-go.sh):
# what test-go and test-postgres run, without running the SQLite tests of store and crashharness twice.
test-go-all:
	@bash scripts/stage.sh "go test -race (with PostgreSQL)" bash scripts/test-go.sh

run:
	$(GO) run .

# A binary whose -version names its release and commit however it is built (go run records
# neither, and Go stamps no VCS information in a git worktree or with -buildvcs=false):
# `make build`, or `make build VERSION=v1.2.3` for a release. OUT names the file.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
OUT ?= forkgraph
build:
	$(GO) build -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o $(OUT) .

generate:
	$(GO) generate ./...

# gofmt and vet over hand-written code (graph/ is generated).
check:
	@bash scripts/stage.sh check $(MAKE) --no-print-directory check-code

check-code:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*') | grep -v '^graph/' || true); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	@bash scripts/check-field-places.sh -known >/dev/null || bash scripts/check-field-places.sh -known

# staticcheck's unused-code check (U1000) over every package and test. Not part of check: a
# cold run builds staticcheck and type-checks the tree, about 5 minutes on two loaded cores.
staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -checks U1000 ./...

# Regenerate and fail if anything changed: generated code must be committed up to date.
generate-check:
	@bash scripts/check-generated.sh

# graphql-schema-linter's default rules (minus alphabetical order; .graphql-schema-linterrc).
lint-schema:
	@bash scripts/run-optional.sh "schema lint (graphql-schema-linter)" scripts/lint-schema.sh

# A breaking change against schema.baseline.graphqls must be named in CHANGELOG.md (Unreleased).
schema-changes:
	@bash scripts/run-optional.sh "breaking schema change check" scripts/check-schema-changes.sh

# The multi-instance suite needs PostgreSQL (and fails under CI=true without it): test-postgres
# runs it with the cluster it starts.
test-go:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v '/internal/multiinstance$$')

# examples/go-client is a module of its own (genqlient and its tools stay out of the root go.mod):
# vet it and run its test, which starts the real server and forks through the generated client.
test-go-client:
	@bash scripts/stage.sh "go client" bash -c 'cd examples/go-client && $(GO) vet ./... && $(GO) test -race -count=1 ./...'

test-postgres:
	@bash scripts/stage.sh "PostgreSQL suites" bash scripts/test-postgres.sh

# The three shell suites run the server as a process: they share one build of it, TEST_BIN, passed
# as FORKGRAPH_BIN (each script run alone builds its own). go build does not link again a target
# that exists with the build ID it would give it, so an unchanged tree costs go's check only.
TEST_BIN ?= $(CURDIR)/.cache/forkgraph-test-bin
test-server-bin:
	@mkdir -p $(dir $(TEST_BIN))
	$(GO) build -o $(TEST_BIN) .

test-e2e: test-server-bin
	@FORKGRAPH_BIN=$(TEST_BIN) bash scripts/stage.sh e2e bash scripts/run-optional.sh "end-to-end client suite (e2e/)" e2e/run.sh

# The TypeScript client (clients/typescript): generated types up to date, build, Node tests against
# real servers, and the npm pack / consumer checks.
test-client: test-server-bin
	@FORKGRAPH_BIN=$(TEST_BIN) bash scripts/stage.sh "TypeScript client" bash scripts/run-optional.sh "TypeScript client suite (clients/typescript/)" clients/typescript/test.sh

test-browser: test-server-bin
	@FORKGRAPH_BIN=$(TEST_BIN) bash scripts/stage.sh browser bash scripts/run-optional.sh "playground browser tests (web/playground/)" web/playground/test-browser.sh

# Fuzz every target for FUZZTIME each (their seed corpora, and any failure found and kept under
# testdata/fuzz/, already run in every `go test`). `make fuzz FUZZTIME=5m` for a longer hunt.
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	./transports:FuzzHTTPRequestDecoder \
	./transports:FuzzWebsocketMessageDecoder \
	./models:FuzzDecodeCursors \
	./models:FuzzCursorRoundTrip \
	./models:FuzzGlobalIDRoundTrip \
	./forkengine:FuzzValidateID

fuzz:
	@set -e; for target in $(FUZZ_TARGETS); do \
		pkg=$${target%%:*}; name=$${target##*:}; \
		echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME); \
	done
