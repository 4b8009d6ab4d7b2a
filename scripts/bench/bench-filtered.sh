#!/usr/bin/env bash
# Filtered search at several selectivities, next to unfiltered, with and without a payload index:
# starts a standalone FlashVec server on 127.0.0.1, ingests a load-gen dataset with the payload
# {"bucket": id % 1000}, seals it and waits for the index, then runs load-gen search with the filter
# bucket < X for X = 500, 100, 10, 1 (50%, 10%, 1%, 0.1%): first without a payload index (the
# evaluator scans payloads), then with an integer index on bucket (Lucene). Recall is measured
# against the exact filtered top-k.
#
#   scripts/bench/bench-filtered.sh DATASET_DIR [COLLECTION]
#
# Env: PORT (18091), DATA (a fresh temp dir), OUT (bench-results/filtered), CONCURRENCY (2),
#      SEARCH_LIST (100), DURATION (10s), WARMUP (3s), SELECTIVITIES ("500 100 10 1"),
#      SKIP_NOINDEX (set: only the indexed runs)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATASET="$1"; COLLECTION="${2:-filtered}"
PORT="${PORT:-18091}"
DATA="${DATA:-$(mktemp -d /tmp/flashvec-filtered.XXXXXX)}"
OUT="${OUT:-$ROOT/bench-results/filtered}"
mkdir -p "$OUT" "$DATA"
"$ROOT/flashvec" build >/dev/null
JAVA="${JAVA_HOME:-$(ls -d /usr/lib/jvm/*25* | head -n 1)}/bin/java"
cp "$ROOT/api-service/target/flashvec.jar" "$DATA/flashvec-server.jar"
cp "$ROOT/load-gen/target/load-gen.jar" "$DATA/load-gen.jar"
loadgen() { "$JAVA" --add-modules jdk.incubator.vector -Xmx4g -jar "$DATA/load-gen.jar" "$@"; }
URL="http://127.0.0.1:$PORT"

FLASHVEC_PORT=$PORT FLASHVEC_DATA_DIR="$DATA" FLASHVEC_SEGMENT_SEAL_THRESHOLD_POINTS=100000000 \
  "$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx6g \
  -jar "$DATA/flashvec-server.jar" >"$OUT/server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
until curl -sf "$URL/readyz" >/dev/null; do sleep 0.5; kill -0 $PID || { cat "$OUT/server.log"; exit 1; }; done

loadgen ingest --url "$URL" --collection "$COLLECTION" --dataset "$DATASET" --payload-buckets 1000 \
  --index diskann --batch 256 --clients 2 --index-timeout 0 --no-progress --out "$OUT/ingest.json"
curl -sf -X POST "$URL/collections/$COLLECTION/flush" >/dev/null
until curl -sf "$URL/collections/$COLLECTION" | grep -q '"status":"green"'; do sleep 2; done

search() { # label, filter-below (0: none)
  loadgen search --url "$URL" --collection "$COLLECTION" --dataset "$DATASET" \
    --payload-buckets 1000 --filter-buckets-below "$2" \
    --concurrency "${CONCURRENCY:-2}" --duration "${DURATION:-10s}" --warmup "${WARMUP:-3s}" \
    --search-list "${SEARCH_LIST:-100}" --out "$OUT/$1.json" | grep -E "^ *(L|search_list|params)|recall" || true
}
search unfiltered 0
[ -n "${SKIP_NOINDEX:-}" ] || for x in ${SELECTIVITIES:-500 100 10 1}; do search "noindex-$x" "$x"; done
T0=$(date +%s%N)
curl -sf -X PUT "$URL/collections/$COLLECTION/index?wait=true" -H 'content-type: application/json' \
  -d '{"field_name": "bucket", "field_schema": "integer"}' >/dev/null
echo "payload index built in $(( ($(date +%s%N) - T0) / 1000000 )) ms"
for x in ${SELECTIVITIES:-500 100 10 1}; do search "index-$x" "$x"; done
