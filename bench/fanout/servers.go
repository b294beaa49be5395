package main

import (
	"context"
	"fmt"
	"os"

	"github.com/forkgraph/forkgraph/internal/multiinstance"
)

// servers is every instance of a run; figures are summed over them.
type servers []*server

// startServers builds the server and starts o.instances of it: on a fresh SQLite file for one
// instance without -db, else on a fresh schema of o.db. cleanup stops them and removes their
// files (and schema); call it even when err is set.
func startServers(ctx context.Context, o options) (servers, func(), error) {
	var all servers
	var dir string
	var drop func() error
	cleanup := func() {
		for _, s := range all {
			s.stop()
		}
		if drop != nil {
			_ = drop()
		}
		if dir != "" {
			_ = os.RemoveAll(dir)
		}
	}
	if o.instances < 1 || (o.instances > 1 && o.db == "") {
		return nil, cleanup, fmt.Errorf("-instances %d: more than one needs -db postgres://…", o.instances)
	}
	bin, built, err := buildServer(ctx, o.repo)
	dir = built
	if err != nil {
		return nil, cleanup, err
	}
	db := ""
	if o.db != "" {
		if db, drop, err = multiinstance.NewSchema(ctx, o.db); err != nil {
			return nil, cleanup, err
		}
	}
	for i := range o.instances {
		s, err := startServer(ctx, bin, dir, db, fmt.Sprintf("fanout-%d", i), o.serverGOGC)
		if err != nil {
			return all, cleanup, err
		}
		all = append(all, s)
	}
	return all, cleanup, nil
}

// wsURLs are the instances' websocket endpoints.
func (ss servers) wsURLs() []string {
	urls := make([]string, len(ss))
	for i, s := range ss {
		urls[i] = s.wsURL
	}
	return urls
}

// memory sums RSS and live memory over the instances.
func (ss servers) memory() (rss, live int64, err error) {
	for _, s := range ss {
		r, err := s.rss()
		if err != nil {
			return 0, 0, err
		}
		l, err := s.liveMemory()
		if err != nil {
			return 0, 0, err
		}
		rss, live = rss+r, live+l
	}
	return rss, live, nil
}

// cpuSeconds sums the instances' CPU time so far (an unreadable one counts 0).
func (ss servers) cpuSeconds() float64 {
	var total float64
	for _, s := range ss {
		c, _ := cpuSeconds(s.cmd.Process.Pid)
		total += c
	}
	return total
}
