// Package firstrun runs the forkgraph binary the way a new user meets it in the first hour: the
// binary built from the repository root, started from the command line in an empty directory.
// Its tests check what a person sees: the exit status, the lines printed (one clear line for a
// mistake, not a page), the files left behind (none when the start fails), what -version says
// for each way of building, the series /metrics exports from the first scrape, and that the
// README's two-instance commands work from a script and leave no process behind. It holds tests
// only.
package firstrun
