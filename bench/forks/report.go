package main

import (
	"fmt"
	"sort"
)

// report prints the measured loop's figures.
func report(o options, res result, before, after fileSize, stmts0, stmts1 int64, stmtErr error, load string) {
	n := float64(res.forks)
	if n == 0 {
		fmt.Println("no fork committed")
		return
	}
	fmt.Printf("forks: %d clients, %d turns × %d messages, %s: %d committed, %.1f committed forks/s\n",
		o.clients, o.turns, o.messages, res.elapsed.Round(1e6), res.forks, n/res.elapsed.Seconds())
	fmt.Printf("fork cycle (forkSession, wait (%s) for COMMITTED, acknowledge): %s; %.2f polls per fork\n",
		o.wait, percentiles(res.cycles), float64(res.polls)/n)
	if stmtErr != nil {
		fmt.Printf("statements per fork: unknown (%v)\n", stmtErr)
	} else {
		fmt.Printf("statements per fork: %.1f (all requests, polls included)\n", float64(stmts1-stmts0)/n)
	}
	fmt.Printf("database bytes per fork: %.0f (%d → %d pages of %d bytes; free pages %d → %d)\n",
		float64(after.bytes()-before.bytes())/n, before.pages, after.pages, after.pageSize, before.free, after.free)
	fmt.Printf("load average after: %s\n", load)
	printRows(before.rows, after.rows, n)
	if before.byName == nil || after.byName == nil {
		fmt.Println("per table and index: build with -tags sqlite_dbstat to see them")
		return
	}
	fmt.Println("bytes per fork by table and index (dbstat: whole pages):")
	for _, g := range growth(before.byName, after.byName) {
		fmt.Printf("  %-40s %8.0f\n", g.name, float64(g.bytes)/n)
	}
}

// printRows prints the rows each table gained per fork.
func printRows(before, after map[string]int64, n float64) {
	var names []string
	for name := range after {
		if after[name] != before[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	fmt.Print("rows per fork:")
	for _, name := range names {
		fmt.Printf(" %s %.1f", name, float64(after[name]-before[name])/n)
	}
	fmt.Println()
}
