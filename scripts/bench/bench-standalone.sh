#!/usr/bin/env bash
# docs/benchmarks/standalone.md: starts a standalone FlashVec server on 127.0.0.1,
# ingests a load-gen dataset, seals it (flush) and waits until the index is built, runs a
# search sweep with load-gen, records the server's anonymous RSS growth, and stops the server.
#
#   scripts/bench/bench-standalone.sh DATASET_DIR COLLECTION [diskann|hnsw|flat] [extra search args...]
#
# Env: PORT (18090), DATA (a fresh temp dir), OUT (bench-results), CONCURRENCY (1,2),
#      INGEST_ARGS (extra load-gen ingest options, e.g. "--index-param pq_subspaces=96"),
#      SEARCH_LIST (20,40,60,100,150,200), DURATION (10s), WARMUP (3s per point; the first point
#      after start-up still runs partly before the JIT settles), JAVA_OPTS (-Xmx6g and a heap that shrinks after GC, so RssAnon shows live memory)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATASET="$1"; COLLECTION="$2"; INDEX="${3:-diskann}"; shift $(( $# >= 3 ? 3 : $# ))
PORT="${PORT:-18090}"
DATA="${DATA:-$(mktemp -d /tmp/flashvec-bench.XXXXXX)}"
OUT="${OUT:-$ROOT/bench-results}"
mkdir -p "$OUT"
"$ROOT/flashvec" build >/dev/null
JAVA="${JAVA_HOME:-$(ls -d /usr/lib/jvm/*25* | head -n 1)}/bin/java"
# Run copies of the jars: a rebuild during the run must not replace the classes under the server.
mkdir -p "$DATA"
cp "$ROOT/api-service/target/flashvec.jar" "$DATA/flashvec-server.jar"
cp "$ROOT/load-gen/target/load-gen.jar" "$DATA/load-gen.jar"
loadgen() { "$JAVA" --add-modules jdk.incubator.vector -Xmx4g -jar "$DATA/load-gen.jar" "$@"; }
URL="http://127.0.0.1:$PORT"

rss_anon_kb() { awk '/^RssAnon/ {print $2}' "/proc/$1/status"; }

FLASHVEC_PORT=$PORT FLASHVEC_DATA_DIR="$DATA" FLASHVEC_SEGMENT_SEAL_THRESHOLD_POINTS=100000000 \
  "$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED ${JAVA_OPTS:--Xmx6g -XX:MinHeapFreeRatio=5 -XX:MaxHeapFreeRatio=10} \
  -jar "$DATA/flashvec-server.jar" >"$OUT/$COLLECTION-server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
until curl -sf "$URL/readyz" >/dev/null; do sleep 0.5; kill -0 $PID || { cat "$OUT/$COLLECTION-server.log"; exit 1; }; done
jcmd $PID GC.run >/dev/null 2>&1 || true
RSS0=$(rss_anon_kb $PID)

loadgen ingest --url "$URL" --collection "$COLLECTION" --dataset "$DATASET" \
  --index "$INDEX" --batch 256 --clients 2 --index-timeout 0 --no-progress ${INGEST_ARGS:-} \
  --out "$OUT/$COLLECTION-ingest.json"
T0=$(date +%s)
curl -sf -X POST "$URL/collections/$COLLECTION/flush" >/dev/null
until curl -sf "$URL/collections/$COLLECTION" | grep -q '"status":"green"'; do sleep 2; done
echo "index built in $(( $(date +%s) - T0 )) s"
jcmd $PID GC.run >/dev/null 2>&1 || true
sleep 1
RSS1=$(rss_anon_kb $PID)
echo "RssAnon growth: $(( (RSS1 - RSS0) / 1024 )) MiB" | tee "$OUT/$COLLECTION-memory.txt"

loadgen search --url "$URL" --collection "$COLLECTION" --dataset "$DATASET" \
  --concurrency "${CONCURRENCY:-1,2}" --duration "${DURATION:-10s}" --warmup "${WARMUP:-3s}" \
  --search-list "${SEARCH_LIST:-20,40,60,100,150,200}" "$@" \
  --out "$OUT/$COLLECTION-search.json" --html "$OUT/$COLLECTION-search.html"
