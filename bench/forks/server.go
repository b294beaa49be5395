package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/forkgraph/forkgraph/internal/multiinstance"
)

// binary returns -bin, or builds -repo into dir.
func binary(ctx context.Context, o options, dir string) (string, error) {
	if o.bin != "" {
		return o.bin, nil
	}
	return multiinstance.Build(ctx, o.repo, dir, false)
}

// startServer runs one forkgraph on the SQLite file at dbPath: open mode, no seed, the
// simulated driver at zero latency, the default barrier.
func startServer(ctx context.Context, bin, dbPath, logDir, name string) (*multiinstance.Instance, error) {
	return multiinstance.Start(ctx, multiinstance.Options{Name: name, Binary: bin, DB: dbPath, LogDir: logDir})
}

const statementsMetric = "forkgraph_store_statements_total"

// scrapeStatements reads the server's statement counter from /metrics; an error when the server
// does not serve it (a build from before the metric).
func scrapeStatements(ctx context.Context, base string) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), statementsMetric+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int64(f), err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("the server does not serve %s", statementsMetric)
}
