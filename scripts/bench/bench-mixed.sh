#!/usr/bin/env bash
# Inserts beside queries (docs/benchmarks/mixed.md): ingests a load-gen dataset into a
# standalone server on 127.0.0.1, seals it, waits for the index and keeps that data directory as a
# snapshot. Then, ROUNDS times and for each mode in turn, it restores the snapshot, starts a
# server on it, warms the query path (WARM of queries), and runs `load-gen mixed`: the same
# closed-loop query stream alone, then beside a paced insert stream. Every run starts from the
# same files, and the modes alternate, so drift of the shared machine hits them alike; the summary
# gives each run's ratios and the median per mode.
#
#   scripts/bench/bench-mixed.sh DATASET_DIR [MODES...]          (default: on off)
#
# Modes: on  — live graphs (flashvec.segment.live-graph=true, the default; ADR 0011, 0014);
#        off — growing segments are scanned exactly until they are sealed and rebuilt;
#        NAME=JAR — live graphs, with another build's server jar (e.g. base=/tmp/old.jar).
#
# Env: PORT (18095), DATA (a fresh temp dir), OUT (bench-results), NAME (mixed), RATE (1000
#      vectors/s), BATCH (100), CONCURRENCY (2), SEARCH_LIST (60), DURATION (25s), WARMUP (5s),
#      WARM (10s), ROUNDS (3), SEAL (100000: FLASHVEC_SEGMENT_SEAL_THRESHOLD_POINTS),
#      JAVA_OPTS (-Xmx6g).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATASET="$1"; shift
MODES="${*:-on off}"
PORT="${PORT:-18095}"
DATA="${DATA:-$(mktemp -d /tmp/flashvec-mixed.XXXXXX)}"
OUT="${OUT:-$ROOT/bench-results}"
NAME="${NAME:-mixed}"
ROUNDS="${ROUNDS:-3}"
# shellcheck source=scripts/bench/bench-lib.sh
. "$ROOT/scripts/bench/bench-lib.sh"

wait_green() {
  until curl -sf "$URL/collections/$NAME" | grep -q '"status":"green"'; do sleep 2; done
}

SNAP="$DATA/snapshot"
if [ ! -d "$SNAP" ]; then
  start_server "$DATA/flashvec-server.jar" "$SNAP" FLASHVEC_SEGMENT_LIVE_GRAPH=true \
    FLASHVEC_SEGMENT_SEAL_THRESHOLD_POINTS="${SEAL:-100000}"
  loadgen ingest --url "$URL" --collection "$NAME" --dataset "$DATASET" --index diskann \
    --batch 256 --clients 2 --index-timeout 0 --no-progress --out "$OUT/$NAME-ingest.json"
  T0=$(date +%s)
  curl -sf -X POST "$URL/collections/$NAME/flush" >/dev/null
  wait_green
  echo "index built in $(( $(date +%s) - T0 )) s" | tee "$OUT/$NAME-build.txt"
  stop_server
fi

for round in $(seq 1 "$ROUNDS"); do
  for mode in $MODES; do
    jar="$DATA/flashvec-server.jar"; live=true; tag="$mode"
    case "$mode" in
      on) ;;
      off) live=false ;;
      *=*) tag="${mode%%=*}"; jar="${mode#*=}" ;;
      *) echo "mode must be on, off or NAME=JAR: $mode" >&2; exit 2 ;;
    esac
    rm -rf "$DATA/run"
    cp -r "$SNAP" "$DATA/run"
    start_server "$jar" "$DATA/run" FLASHVEC_SEGMENT_LIVE_GRAPH="$live" \
      FLASHVEC_SEGMENT_SEAL_THRESHOLD_POINTS="${SEAL:-100000}"
    wait_green
    loadgen search --url "$URL" --collection "$NAME" --dataset "$DATASET" --concurrency "${CONCURRENCY:-2}" \
      --duration "${WARM:-10s}" --search-list "${SEARCH_LIST:-60}" --out "$DATA/warm.json" >/dev/null
    loadgen mixed --url "$URL" --collection "$NAME" --dataset "$DATASET" \
      --concurrency "${CONCURRENCY:-2}" --duration "${DURATION:-25s}" --warmup "${WARMUP:-5s}" \
      --insert-rate "${RATE:-1000}" --insert-batch "${BATCH:-100}" --search-list "${SEARCH_LIST:-60}" \
      --out "$OUT/$NAME-$tag-$round.json" --html "$OUT/$NAME-$tag-$round.html"
    curl -sf "$URL/metrics" | grep -E '^flashvec_search_(distance|expanded)' >"$OUT/$NAME-$tag-$round-metrics.txt" || true
    stop_server
  done
done
rm -rf "$DATA/run"
python3 - "$OUT" "$NAME" "$ROUNDS" $MODES <<'EOF'
import json, statistics, sys
out, name, rounds, modes = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
for mode in modes:
    tag = mode.split("=", 1)[0]
    runs = [json.load(open(f"{out}/{name}-{tag}-{r}.json")) for r in range(1, rounds + 1)]
    qps = [r["ratios"]["qps"] for r in runs]
    p99 = [r["ratios"]["p99"] for r in runs]
    alone = [round(r["queries_only"]["qps"]) for r in runs]
    mixed = [round(r["with_inserts"]["qps"]) for r in runs]
    print(f"{tag}: QPS ratio {qps} median {statistics.median(qps):.3f}; "
          f"P99 ratio {p99} median {statistics.median(p99):.3f}; QPS alone {alone}, with inserts {mixed}")
EOF
