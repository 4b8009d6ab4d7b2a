#!/usr/bin/env bash
# Cluster mode against shard count (issue 7 §9): starts a local cluster (etcd + proxy + QUERY_NODES
# query nodes + an index node, all on 127.0.0.1), creates one collection per shard count
# (replication 1, `diskann`), ingests the dataset into each through the proxy, seals and waits for
# the indexes, then runs the same load-gen search against each collection through the proxy.
# The proxy's /metrics deltas in each JSON give the work per query summed over all shards
# (distance computations, nodes visited, pages read).
#
#   scripts/bench-cluster.sh DATASET_DIR [SHARD_COUNTS...]      (default: 1 2 4)
#
# Env: OUT (bench-results), PORT (18180; query nodes PORT+1.., gRPC 17170+n, etcd 12379/12380),
#      QUERY_NODES (4), CONCURRENCY (2), SEARCH_LIST (60,100), DURATION (10s), WARMUP (3s),
#      JAVA_OPTS (per node, -Xmx2g), CLUSTER_DIR (a fresh temp dir), KEEP=1 leaves it running.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATASET="$1"; shift
SHARDS="${*:-1 2 4}"
OUT="${OUT:-$ROOT/bench-results}"
mkdir -p "$OUT"
export FLASHVEC_PORT="${PORT:-18180}"
export FLASHVEC_CLUSTER_DIR="${CLUSTER_DIR:-$(mktemp -d /tmp/flashvec-cluster-bench.XXXXXX)}"
export FLASHVEC_QUERY_NODES="${QUERY_NODES:-4}"
export FLASHVEC_GRPC_BASE_PORT="${GRPC_BASE_PORT:-17170}"
export FLASHVEC_ETCD_PORT="${ETCD_PORT:-12379}"
export FLASHVEC_ETCD_PEER_PORT="${ETCD_PEER_PORT:-12380}"
# One segment per shard, as scripts/bench-standalone.sh does for one server.
export FLASHVEC_SEGMENT_SEAL_THRESHOLD_POINTS=100000000
export JAVA_OPTS="${JAVA_OPTS:--Xmx2g -XX:MinHeapFreeRatio=5 -XX:MaxHeapFreeRatio=10}"
URL="http://127.0.0.1:$FLASHVEC_PORT"

"$ROOT/flashvec" build >/dev/null
JAVA="${JAVA_HOME:-$(ls -d /usr/lib/jvm/*25* | head -n 1)}/bin/java"
cp "$ROOT/load-gen/target/load-gen.jar" "$FLASHVEC_CLUSTER_DIR/load-gen.jar"
loadgen() { "$JAVA" --add-modules jdk.incubator.vector -Xmx4g -jar "$FLASHVEC_CLUSTER_DIR/load-gen.jar" "$@"; }

"$ROOT/flashvec" cluster up >/dev/null
if [ "${KEEP:-0}" != 1 ]; then
  trap '"$ROOT/flashvec" cluster down >/dev/null 2>&1 || true' EXIT
fi
DIM=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["dim"])' "$DATASET/manifest.json")
METRIC=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["metric"]; print({"cosine":"Cosine","l2":"Euclid","ip":"Dot"}.get(m.lower(), m))' "$DATASET/manifest.json")

for s in $SHARDS; do
  c="shards$s"
  curl -sf -X PUT "$URL/collections/$c" -H 'content-type: application/json' \
    -d "{\"vectors\":{\"size\":$DIM,\"distance\":\"$METRIC\"},\"shard_number\":$s,\"replication_factor\":1,\"index\":{\"type\":\"diskann\"}}" >/dev/null
  loadgen ingest --url "$URL" --collection "$c" --dataset "$DATASET" --batch 256 --clients 2 \
    --index-timeout 0 --no-progress --out "$OUT/cluster-$c-ingest.json"
  T0=$(date +%s)
  curl -sf -X POST "$URL/collections/$c/flush" >/dev/null
  until curl -sf "$URL/collections/$c" | grep -q '"status":"green"'; do sleep 2; done
  echo "$c: indexes built in $(( $(date +%s) - T0 )) s"
done

for s in $SHARDS; do
  c="shards$s"
  loadgen search --url "$URL" --collection "$c" --dataset "$DATASET" \
    --concurrency "${CONCURRENCY:-2}" --duration "${DURATION:-10s}" --warmup "${WARMUP:-3s}" \
    --search-list "${SEARCH_LIST:-60,100}" \
    --out "$OUT/cluster-$c-search.json" --html "$OUT/cluster-$c-search.html"
done
echo "cluster results in $OUT/cluster-shards*-search.json (logs: $FLASHVEC_CLUSTER_DIR/logs)"
