#!/usr/bin/env bash
# Start a throwaway PostgreSQL cluster for the store tests, listening on 127.0.0.1 only, and
# print the variables to eval:
#
#   eval "$(scripts/start-postgres.sh)"
#   go test -race ./store/...
#   scripts/start-postgres.sh stop          # stops the cluster named by $FORKGRAPH_PG_DIR, deletes it
#   scripts/start-postgres.sh pause DIR     # stops the server of cluster DIR, keeping its data (an outage)
#   scripts/start-postgres.sh resume DIR    # starts it again, on the same port
#
# It uses the PostgreSQL server binaries on PATH, in /usr/local/bin or /usr/lib/postgresql/*/bin,
# and installs Debian's postgresql package when there are none. initdb refuses to run as root,
# so as root the cluster belongs to an unprivileged OS user ($FORKGRAPH_PG_OS_USER, default
# forkgraph-pg, created when missing). Durability is switched off: the data is disposable.
set -euo pipefail

os_user="${FORKGRAPH_PG_OS_USER:-forkgraph-pg}"

log() { printf '%s\n' "$*" >&2; }

# as_owner runs a command as the cluster owner.
as_owner() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u "$os_user" -- "$@"
	else
		"$@"
	fi
}

find_bindir() {
	local candidate
	for candidate in "$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/x)")" /usr/local/bin /usr/lib/postgresql/*/bin; do
		if [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_ctl" ] && [ -x "$candidate/postgres" ]; then
			echo "$candidate"
			return 0
		fi
	done
	return 1
}

free_port() {
	# Go is the one tool every machine that runs these tests has.
	local src
	src="$(mktemp -d)/freeport.go"
	printf '%s\n' 'package main' 'import ("fmt"; "net")' \
		'func main() { l, err := net.Listen("tcp", "127.0.0.1:0"); if err != nil { panic(err) }; fmt.Println(l.Addr().(*net.TCPAddr).Port); l.Close() }' >"$src"
	go run "$src"
	rm -rf "$(dirname "$src")"
}

stop_cluster() {
	local dir="${1:-${FORKGRAPH_PG_DIR:-}}"
	if [ -z "$dir" ] || [ ! -d "$dir/data" ]; then
		log "no cluster to stop (pass its directory or set FORKGRAPH_PG_DIR)"
		exit 1
	fi
	if as_owner "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then # a paused one is stopped already
		as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >&2
	fi
	rm -rf "$dir"
	log "stopped and removed $dir"
}

# start_server starts the server of cluster $1 on port $2 and waits until it accepts connections.
start_server() {
	as_owner "$bindir/pg_ctl" -D "$1/data" -l "$1/server.log" -w -t 30 start -o \
		"-c listen_addresses=127.0.0.1 -p $2 -k $1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >&2 ||
		{ cat "$1/server.log" >&2; exit 1; }
}

if ! bindir="$(find_bindir)"; then
	log "no PostgreSQL server binaries found; installing Debian's postgresql package"
	apt-get update >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql >&2
	bindir="$(find_bindir)"
fi

if [ "$(id -u)" -eq 0 ] && ! id "$os_user" >/dev/null 2>&1; then
	log "creating OS user $os_user to own the cluster (initdb refuses root)"
	useradd --system --no-create-home --shell /usr/sbin/nologin "$os_user"
fi

if [ "${1:-}" = "stop" ]; then
	stop_cluster "${2:-}"
	exit 0
fi

if [ "${1:-}" = "pause" ] || [ "${1:-}" = "resume" ]; then
	dir="${2:-}"
	if [ -z "$dir" ] || [ ! -f "$dir/port" ]; then
		log "no cluster at '$dir' (pass the directory the start printed as FORKGRAPH_PG_DIR)"
		exit 1
	fi
	if [ "$1" = "pause" ]; then
		as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >&2
	else
		start_server "$dir" "$(cat "$dir/port")"
	fi
	exit 0
fi

dir="$(mktemp -d /tmp/forkgraph-pg.XXXXXX)"
chmod 700 "$dir"
[ "$(id -u)" -eq 0 ] && chown "$os_user" "$dir"
port="$(free_port)"

as_owner "$bindir/initdb" -D "$dir/data" -U forkgraph --auth=trust --encoding=UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
	{ cat "$dir/initdb.log" >&2; exit 1; }
echo "$port" >"$dir/port"
start_server "$dir" "$port"

log "PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') running on 127.0.0.1:$port, data in $dir"
log "stop it with: scripts/start-postgres.sh stop $dir"
echo "export FORKGRAPH_PG_DIR='$dir'"
echo "export FORKGRAPH_TEST_POSTGRES_DSN='postgres://forkgraph@127.0.0.1:$port/postgres?sslmode=disable'"
