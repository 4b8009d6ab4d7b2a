#!/usr/bin/env bash
# FlashVec next to its peers, back to back in one run (ratios from one run are what we report):
# FlashVec over REST, diskannpy in-process (warm: every node cached), pgvector HNSW over JDBC,
# then FlashVec again. Reuses a data directory left by scripts/bench/bench-standalone.sh (DATA=...)
# and a pgvector collection loaded with `loadgen ingest --target pgvector --index hnsw`
# (PG_COLLECTION). The diskannpy index of the dataset is built first if it is missing
# (scripts/bench/diskannpy-warm-quick.py, into DATASET_DIR/diskannpy-index, in a venv under
# .tools/peerenv).
#
#   scripts/bench/bench-peers.sh DATA_DIR DATASET_DIR COLLECTION
#
# Env: PORT (18095), SEARCH_LIST (50,60,80,100), DAP_LISTS ("100 120 150"), PG_LISTS (10,20,40),
#      PG_COLLECTION (COLLECTION), PEER_PYTHON (a python with numpy and diskannpy 0.7.0;
#      default .tools/peerenv/bin/python, created when missing)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA="$1"; DATASET="$2"; COLLECTION="$3"
PORT="${PORT:-18095}"
PEER_PYTHON="${PEER_PYTHON:-$ROOT/.tools/peerenv/bin/python}"
if ! "$PEER_PYTHON" -c "import diskannpy" 2>/dev/null; then
  python3 -m venv "$ROOT/.tools/peerenv"
  "$ROOT/.tools/peerenv/bin/pip" install -q "diskannpy==0.7.0"
  PEER_PYTHON="$ROOT/.tools/peerenv/bin/python"
fi
"$PEER_PYTHON" "$ROOT/scripts/bench/diskannpy-warm-quick.py" "$DATASET" build
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
"$PEER_PYTHON" "$ROOT/scripts/bench/diskannpy-warm-quick.py" "$DATASET" ${DAP_LISTS:-100 120 150} \
  2>/dev/null | grep '^diskannpy'
"$ROOT/scripts/bench/pgvector-server.sh" start >/dev/null
"${LG[@]}" --target pgvector --jdbc-url "$("$ROOT/scripts/bench/pgvector-server.sh" url)" \
  --collection "${PG_COLLECTION:-$COLLECTION}" --search-list "${PG_LISTS:-10,20,40}" --duration 8s --out "$DATA/peers-pgvector.json" | grep "search c="
"$ROOT/scripts/bench/pgvector-server.sh" stop >/dev/null
fv 2
