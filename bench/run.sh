#!/bin/sh
# Runs the peer benchmark (peer_test.go) and prints benchstat's tables:
# a row per operation, a column per client, each compared with bare
# net/http; then the paired ratios (each client timed next to bare
# net/http doing the same). Rows interleave: each of the COUNT runs runs
# every row in turn. Client and server share this machine's cores, so the
# CPU-time rows (cpu-ns/op, cpu-ratio) hold when other processes load it
# and wall time does not.
#
#   bench/run.sh                          # 10 runs of 2000 operations a row
#   COUNT=5 BENCHTIME=1000x bench/run.sh  # quicker
#   OUT=/tmp/peer bench/run.sh            # keep the raw results there
set -eu
cd "$(dirname "$0")"
count=${COUNT:-10}
benchtime=${BENCHTIME:-2000x}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
go test -run '^$' -bench 'BenchmarkPeer$' -benchtime "$benchtime" -count "$count" . > "$out/peer.txt"
go test -run '^$' -bench 'BenchmarkPeerPaired$' -benchtime "$benchtime" -count "$count" . > "$out/paired.txt"
go tool benchstat -row /op -col /client "$out/peer.txt"
echo
go tool benchstat -filter '.unit:(cpu-ratio OR ratio)' -row /op,/client -col .name "$out/paired.txt"
echo
echo "raw results: $out"
