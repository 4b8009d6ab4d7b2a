#!/usr/bin/env bash
# Inserts beside queries (issue 5 §5, BENCHMARKS.md workload 5): starts a standalone server on
# 127.0.0.1, ingests a load-gen dataset, seals it and waits for the index, then runs
# `load-gen mixed` (the same closed-loop query stream alone, then beside a paced insert stream)
# once per growing-segment mode, restarting the server on the same data in between:
#   on  — live graphs (flashvec.segment.live-graph=true, the default): new points are inserted
#         into an in-memory graph by the live indexer and searched through it (ADR 0011);
#   off — growing segments are scanned exactly until they are sealed and rebuilt.
#
#   scripts/bench-mixed.sh DATASET_DIR [MODES...]          (default: on off)
#
# Env: PORT (18095), DATA (a fresh temp dir), OUT (bench-results), NAME (mixed), RATE (1000
#      vectors/s), BATCH (100), CONCURRENCY (2), SEARCH_LIST (60), DURATION (30s), WARMUP (5s),
#      SEAL (100000: FLASHVEC_SEGMENT_SEAL_THRESHOLD_POINTS), JAVA_OPTS (-Xmx6g).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATASET="$1"; shift
MODES="${*:-on off}"
PORT="${PORT:-18095}"
DATA="${DATA:-$(mktemp -d /tmp/flashvec-mixed.XXXXXX)}"
OUT="${OUT:-$ROOT/bench-results}"
NAME="${NAME:-mixed}"
mkdir -p "$OUT" "$DATA"
"$ROOT/flashvec" build >/dev/null
JAVA="${JAVA_HOME:-$(ls -d /usr/lib/jvm/*25* | head -n 1)}/bin/java"
cp "$ROOT/api-service/target/flashvec.jar" "$DATA/flashvec-server.jar"
cp "$ROOT/load-gen/target/load-gen.jar" "$DATA/load-gen.jar"
loadgen() { "$JAVA" --add-modules jdk.incubator.vector -Xmx4g -jar "$DATA/load-gen.jar" "$@"; }
URL="http://127.0.0.1:$PORT"
PID=""
trap '[ -z "$PID" ] || kill $PID 2>/dev/null || true' EXIT

start_server() { # start_server <true|false>
  FLASHVEC_PORT=$PORT FLASHVEC_DATA_DIR="$DATA/server" FLASHVEC_SEGMENT_LIVE_GRAPH="$1" \
    FLASHVEC_SEGMENT_SEAL_THRESHOLD_POINTS="${SEAL:-100000}" \
    "$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED ${JAVA_OPTS:--Xmx6g} \
    -jar "$DATA/flashvec-server.jar" >>"$OUT/$NAME-server.log" 2>&1 &
  PID=$!
  until curl -sf "$URL/readyz" >/dev/null; do
    sleep 0.5
    kill -0 $PID 2>/dev/null || { tail -n 40 "$OUT/$NAME-server.log"; exit 1; }
  done
}

stop_server() {
  kill $PID 2>/dev/null || true
  wait $PID 2>/dev/null || true
  PID=""
}

wait_green() {
  until curl -sf "$URL/collections/$NAME" | grep -q '"status":"green"'; do sleep 2; done
}

first=1
for mode in $MODES; do
  case "$mode" in on) live=true ;; off) live=false ;; *) echo "mode must be on or off: $mode" >&2; exit 2 ;; esac
  start_server "$live"
  if [ $first = 1 ]; then
    loadgen ingest --url "$URL" --collection "$NAME" --dataset "$DATASET" --index diskann \
      --batch 256 --clients 2 --index-timeout 0 --no-progress --out "$OUT/$NAME-ingest.json"
    T0=$(date +%s)
    curl -sf -X POST "$URL/collections/$NAME/flush" >/dev/null
    wait_green
    echo "index built in $(( $(date +%s) - T0 )) s (live graph $mode)" | tee "$OUT/$NAME-build.txt"
    first=0
  fi
  wait_green
  loadgen mixed --url "$URL" --collection "$NAME" --dataset "$DATASET" \
    --concurrency "${CONCURRENCY:-2}" --duration "${DURATION:-30s}" --warmup "${WARMUP:-5s}" \
    --insert-rate "${RATE:-1000}" --insert-batch "${BATCH:-100}" --search-list "${SEARCH_LIST:-60}" \
    --out "$OUT/$NAME-live-$mode.json" --html "$OUT/$NAME-live-$mode.html"
  curl -sf "$URL/metrics" | grep -E '^flashvec_search_(distance|expanded)' >"$OUT/$NAME-live-$mode-metrics.txt" || true
  stop_server
done
for mode in $MODES; do
  printf '%s: ' "live graph $mode"
  grep -o '"ratios" *: *{[^}]*}' "$OUT/$NAME-live-$mode.json" | tr -d '\n'
  echo
done
