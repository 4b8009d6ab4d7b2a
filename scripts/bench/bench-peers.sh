#!/usr/bin/env bash
# FlashVec next to its peers, back to back in one run (ratios from one run are what we report):
# FlashVec over REST, diskannpy in-process (warm: every node cached), pgvector HNSW over JDBC,
# then FlashVec again. Reuses a data directory left by scripts/bench/bench-standalone.sh (DATA=...),
# the diskannpy index built by ../shared/bench/bl_diskann.py, and a pgvector collection loaded
# with `loadgen ingest --target pgvector --index hnsw` (PG_COLLECTION).
#
#   scripts/bench/bench-peers.sh DATA_DIR DATASET_DIR COLLECTION
#
# Env: PORT (18095), SEARCH_LIST (50,60,80,100), DAP_LISTS ("100 120 150"), PG_LISTS (10,20,40),
#      PG_COLLECTION (COLLECTION), BENCHDATA (~/benchdata), PEER_PYTHON ($BENCHDATA/venv/bin/python)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA="$1"; DATASET="$2"; COLLECTION="$3"
PORT="${PORT:-18095}"
BENCHDATA="${BENCHDATA:-$HOME/benchdata}"
JAVA="${JAVA_HOME:-$(ls -d /usr/lib/jvm/*25* | head -n 1)}/bin/java"
FLASHVEC_PORT=$PORT FLASHVEC_DATA_DIR="$DATA" "$JAVA" --add-modules jdk.incubator.vector \
  --enable-native-access=ALL-UNNAMED -Xmx6g -jar "$DATA/flashvec-server.jar" >"$DATA/peers-server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do sleep 0.5; kill -0 $PID; done
LG=("$JAVA" --add-modules jdk.incubator.vector -Xmx4g -jar "$DATA/load-gen.jar" search --dataset "$DATASET"
    --concurrency 2 --warmup 3s)
fv() { "${LG[@]}" --url "http://127.0.0.1:$PORT" --collection "$COLLECTION" --search-list "${SEARCH_LIST:-50,60,80,100}" --duration 8s --out "$DATA/peers-flashvec-$1.json" | grep "search c="; }
# one unmeasured pass first: the first point after start-up runs before the JIT has settled
"${LG[@]}" --url "http://127.0.0.1:$PORT" --collection "$COLLECTION" --search-list 50 --duration 10s \
  --out "$DATA/peers-warmup.json" >/dev/null
fv 1
# shellcheck disable=SC2086
BENCHDATA="$BENCHDATA" "${PEER_PYTHON:-$BENCHDATA/venv/bin/python}" "$ROOT/scripts/bench/diskannpy-warm-quick.py" \
  "$(basename "$DATASET")" ${DAP_LISTS:-100 120 150} 2>/dev/null | grep '^diskannpy'
"$ROOT/scripts/bench/pgvector-server.sh" start >/dev/null
"${LG[@]}" --target pgvector --jdbc-url "$("$ROOT/scripts/bench/pgvector-server.sh" url)" \
  --collection "${PG_COLLECTION:-$COLLECTION}" --search-list "${PG_LISTS:-10,20,40}" --duration 8s --out "$DATA/peers-pgvector.json" | grep "search c="
"$ROOT/scripts/bench/pgvector-server.sh" stop >/dev/null
fv 2
