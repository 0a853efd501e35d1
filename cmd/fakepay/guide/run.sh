#!/usr/bin/env bash
# Runs the idempotency guide's examples of this folder (cURL, Python with
# urllib, Node with fetch) against `go run ./cmd/fakepay` on a free
# loopback port. A missing tool fails the run: CI must run all three.
set -euo pipefail
cd "$(dirname "$0")/../../.."
for tool in curl python3 node; do
  command -v "$tool" >/dev/null || { echo "guide scripts: $tool is not installed"; exit 1; }
done
log=$(mktemp)
set -m # the server gets a process group of its own, stopped as one below
go run ./cmd/fakepay -addr 127.0.0.1:0 >"$log" 2>&1 &
pid=$!
set +m
stop() { kill -TERM -- "-$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log"; }
trap stop EXIT
for _ in $(seq 1 3000); do # a cold build takes a while
  grep -q '^fakepay listening on ' "$log" && break
  kill -0 "$pid" 2>/dev/null || { cat "$log"; echo "fakepay exited"; exit 1; }
  sleep 0.1
done
url=$(sed -n 's/^fakepay listening on //p' "$log" | head -n 1)
[ -n "$url" ] || { cat "$log"; echo "fakepay did not start"; exit 1; }
export FAKEPAY_URL="$url"
bash cmd/fakepay/guide/guide.sh
python3 cmd/fakepay/guide/guide.py
node cmd/fakepay/guide/guide.mjs
