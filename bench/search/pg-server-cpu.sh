#!/usr/bin/env bash
# The PostgreSQL server's CPU per call of bench/search queries: the cluster's processes' CPU
# (the postmaster's own and its reaped backends') before and after one run of the benchmark,
# divided by the calls (the timed ones and the 5 warm-up calls of each query). The bench's own
# cpu/call column is the client's only; this one moves much less than wall time with the load of
# a shared machine. The cluster must serve nothing else meanwhile.
#
#   bench/search/pg-server-cpu.sh BENCH_BINARY CLUSTER_DIR DSN QUERY_TEXT [CALLS]
#   bench/search/pg-server-cpu.sh /tmp/search-bench /work/data/search/pg \
#       'postgres://forkgraph@127.0.0.1:42759/search?sslmode=disable' '"half odd"' 100
set -euo pipefail
bin=$1 dir=$2 dsn=$3 only=$4 n=${5:-100}
pm=$(head -1 "$dir/data/postmaster.pid")
ticks=$(getconf CLK_TCK)
cpu() {
	local t=0 p f
	for p in $pm $(pgrep -P "$pm"); do
		read -r -a f <"/proc/$p/stat" 2>/dev/null || continue
		t=$((t + f[13] + f[14] + f[15] + f[16])) # utime stime cutime cstime
	done
	echo "$t"
}
before=$(cpu)
out=$("$bin" -db "$dsn" -n "$n" -only "$only")
sleep 1 # the backends exit and are reaped into the postmaster's children's times
after=$(cpu)
echo "$out" | grep '^| "'
queries=$(echo "$out" | grep -c '^| "')
calls=$(((n + 5) * queries))
echo "server cpu/call: $(awk -v d=$((after - before)) -v c="$calls" -v hz="$ticks" 'BEGIN { printf "%.2f ms", d * 1000 / hz / c }') over $calls calls (load $(cut -d' ' -f1-3 /proc/loadavg))"
