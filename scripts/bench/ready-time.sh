#!/usr/bin/env bash
# ready-time.sh <checkout> [port]: starts `<checkout>/flashvec run` on an empty data directory and
# prints the seconds to /readyz and the CPU seconds the server used until then (docs/benchmarks/start-up.md).
set -euo pipefail
root="$1"
port="${2:-7399}"
d="$(mktemp -d)"
t0="$(date +%s.%N)"
FLASHVEC_PORT="$port" FLASHVEC_DATA_DIR="$d" "$root/flashvec" run >"$d.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$d" "$d.log"' EXIT
until curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null; do
  kill -0 $pid 2>/dev/null || { tail -n 20 "$d.log" >&2; exit 1; }
  sleep 0.05
done
t1="$(date +%s.%N)"
# the launcher execs the server, so $pid is the server's JVM
read -r ut st < <(awk '{print $14, $15}' "/proc/$pid/stat")
printf 'wall %.2f s  server cpu %.2f s  load %s\n' "$(echo "$t1 - $t0" | bc)" \
  "$(echo "($ut + $st) / $(getconf CLK_TCK)" | bc -l)" "$(cut -d' ' -f1 /proc/loadavg)"
