#!/usr/bin/env bash
# Cold-cache search sweep on a data directory that scripts/bench/bench-standalone.sh left behind (run it
# with DATA=<dir> first): for each prefetch mode, starts the server on that directory, and for each
# search_list evicts the collection's index files (POST /collections/{c}/evict: unmaps them in the
# server and drops them from the page cache) and runs one pass over the queries from cold. Reports
# QPS, recall and pages read per query (flashvec_io_pages_read_total) per point.
#
#   scripts/bench/bench-cold.sh DATA_DIR DATASET_DIR COLLECTION
#
# Env: PORT (18091), OUT (bench-results), MODES (off,on), SEARCH_LIST (40,60,100), BEAM_WIDTH (4),
#      CONCURRENCY (2), QUERIES (1000)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA="$1"; DATASET="$2"; COLLECTION="$3"
PORT="${PORT:-18091}"
OUT="${OUT:-$ROOT/bench-results}"
mkdir -p "$OUT"
JAVA="${JAVA_HOME:-$(ls -d /usr/lib/jvm/*25* | head -n 1)}/bin/java"
[ -f "$DATA/flashvec-server.jar" ] || { echo "no server jar in $DATA (run bench-standalone.sh with DATA=$DATA)"; exit 1; }
URL="http://127.0.0.1:$PORT"
IFS=',' read -r -a modes <<<"${MODES:-off,on}"
for mode in "${modes[@]}"; do
  FLASHVEC_PORT=$PORT FLASHVEC_DATA_DIR="$DATA" FLASHVEC_SEARCH_PREFETCH="$mode" \
    FLASHVEC_SEGMENT_SEAL_THRESHOLD_POINTS=100000000 \
    "$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx6g \
    -jar "$DATA/flashvec-server.jar" >"$OUT/$COLLECTION-cold-$mode-server.log" 2>&1 &
  PID=$!
  trap 'kill $PID 2>/dev/null || true' EXIT
  until curl -sf "$URL/readyz" >/dev/null; do sleep 0.5; kill -0 $PID; done
  "$JAVA" --add-modules jdk.incubator.vector -Xmx4g -jar "$DATA/load-gen.jar" search \
    --url "$URL" --collection "$COLLECTION" --dataset "$DATASET" \
    --concurrency "${CONCURRENCY:-2}" --queries "${QUERIES:-1000}" --warmup 0s --evict \
    --search-list "${SEARCH_LIST:-40,60,100}" --beam-width "${BEAM_WIDTH:-4}" \
    --out "$OUT/$COLLECTION-cold-$mode.json"
  kill $PID; wait $PID 2>/dev/null || true
done
