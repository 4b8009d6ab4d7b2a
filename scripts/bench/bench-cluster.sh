#!/usr/bin/env bash
# Cluster baseline (docs/benchmarks/cluster.md): QPS, P99 and the total work per
# query summed over all nodes for 1, 2 and 4 shards — the figures a later global-graph mode is
# compared with.
#
# Starts a local cluster with `./flashvec cluster up` (etcd, a proxy, QUERY_NODES query nodes, an
# index node) on free loopback ports in a temporary FLASHVEC_CLUSTER_DIR, creates one collection
# per shard count (replication_factor 1, diskann defaults; placement puts shard s on query node
# s+1), ingests the same dataset into each, flushes (one sealed segment per shard) and waits until
# every shard's index is built (status green). Then, back to back in one run, `loadgen search` at
# CONCURRENCY clients with fixed search params on each collection (ROUNDS times, interleaved),
# reading /metrics of the proxy and of every query node (--metrics-url), so the work per query is
# summed over the nodes and reported per node; with COLD=1 also QUERIES queries per collection at
# one client with the index evicted from the page cache before each query (pages read per query
# of a cold search). Writes JSON + HTML per run, a combined HTML, and a summary (markdown + JSON)
# under OUT, and always stops the cluster (also on failure or Ctrl-C).
#
#   scripts/bench/bench-cluster.sh DATASET_DIR [NAME]
#
# Env: SHARDS (1,2,4), QUERY_NODES (4), SEARCH_LIST (100), BEAM_WIDTH (unset: server's automatic),
#      CONCURRENCY (2), DURATION (10s), WARMUP (3s), ROUNDS (3), COLD (1), QUERIES (200),
#      JIT_WARMUP (10s: an unmeasured run per collection before round 1),
#      OUT (bench-results), NODE_JAVA_OPTS (-Xmx2g, every node's JVM), BATCH (256),
#      BASE_PORT (first of 20 free loopback ports; default: the first free block from 19200),
#      FLASHVEC_CLUSTER_DIR (a new temp dir), KEEP (0: delete the cluster dir afterwards),
#      BUILD_TIMEOUT (3600 s per collection)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[ $# -ge 1 ] || { sed -n '2,30p' "$0"; exit 2; }
DATASET="$(cd "$1" && pwd)"
NAME="${2:-$(basename "$DATASET")}"
NAME="${NAME//[^A-Za-z0-9_-]/-}"
IFS=',' read -r -a SHARD_COUNTS <<<"${SHARDS:-1,2,4}"
QUERY_NODES="${QUERY_NODES:-4}"
SEARCH_LIST="${SEARCH_LIST:-100}"
CONCURRENCY="${CONCURRENCY:-2}"
ROUNDS="${ROUNDS:-3}"
COLD="${COLD:-1}"
QUERIES="${QUERIES:-200}"
OUT="${OUT:-$ROOT/bench-results}"
BUILD_TIMEOUT="${BUILD_TIMEOUT:-3600}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
for s in "${SHARD_COUNTS[@]}"; do
  [ "$s" -le "$QUERY_NODES" ] || { echo "bench-cluster: $s shards need $s query nodes (QUERY_NODES=$QUERY_NODES)" >&2; exit 2; }
done

# ------------------------------------------------------------------ ports: 20 free ones in a row
port_busy() {
  if command -v ss >/dev/null; then
    [ -n "$(ss -Htln "sport = :$1" 2>/dev/null)" ]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}
block_free() {
  local p
  for p in $(seq "$1" $(($1 + 19))); do
    if port_busy "$p"; then return 1; fi
  done
}
if [ -n "${BASE_PORT:-}" ]; then
  block_free "$BASE_PORT" || { echo "bench-cluster: ports $BASE_PORT..$((BASE_PORT + 19)) are not all free" >&2; exit 1; }
  BASE="$BASE_PORT"
else
  BASE=19200
  until block_free "$BASE"; do
    BASE=$((BASE + 20))
    [ "$BASE" -lt 30000 ] || { echo "bench-cluster: no 20 free ports in 19200..30000" >&2; exit 1; }
  done
fi
# proxy BASE, query node i BASE+i (REST), index node BASE+QUERY_NODES+1; gRPC BASE+10(+i); etcd BASE+18/19
export FLASHVEC_PORT="$BASE"
export FLASHVEC_GRPC_BASE_PORT=$((BASE + 10))
export FLASHVEC_ETCD_PORT=$((BASE + 18))
export FLASHVEC_ETCD_PEER_PORT=$((BASE + 19))
export FLASHVEC_QUERY_NODES="$QUERY_NODES"
[ "$QUERY_NODES" -le 8 ] || { echo "bench-cluster: at most 8 query nodes fit the port block" >&2; exit 2; }
export FLASHVEC_CLUSTER_DIR="${FLASHVEC_CLUSTER_DIR:-$(mktemp -d /tmp/flashvec-clbench.XXXXXX)}"
# one sealed segment per shard: no seal during ingest, the flush seals everything
export FLASHVEC_SEGMENT_SEAL_THRESHOLD_POINTS=100000000
URL="http://127.0.0.1:$BASE"

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  "$ROOT/flashvec" cluster down || true
  if [ "${KEEP:-0}" = "1" ]; then
    echo "bench-cluster: cluster data kept in $FLASHVEC_CLUSTER_DIR" >&2
  else
    rm -rf "$FLASHVEC_CLUSTER_DIR"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

JAVA_OPTS="${NODE_JAVA_OPTS:--Xmx2g}" "$ROOT/flashvec" cluster up >/dev/null
JAVA="${JAVA_HOME:-$(ls -d /usr/lib/jvm/*25* | head -n 1)}/bin/java"
# a copy: a rebuild during the run must not replace the classes under load-gen
cp "$ROOT/load-gen/target/load-gen.jar" "$FLASHVEC_CLUSTER_DIR/load-gen.jar"
loadgen() { "$JAVA" --add-modules jdk.incubator.vector -Xmx4g -jar "$FLASHVEC_CLUSTER_DIR/load-gen.jar" "$@"; }

METRICS=(--metrics-url "proxy-1=$URL")
for i in $(seq 1 "$QUERY_NODES"); do
  METRICS+=(--metrics-url "query-$i=http://127.0.0.1:$((BASE + i))")
done
PARAMS=(--search-list "$SEARCH_LIST")
[ -z "${BEAM_WIDTH:-}" ] || PARAMS+=(--beam-width "$BEAM_WIDTH")
DIM="$(jq -r '.dim' "$DATASET/manifest.json" 2>/dev/null || true)"
if [ -z "$DIM" ] || [ "$DIM" = null ]; then
  echo "bench-cluster: $DATASET/manifest.json has no dim (make the dataset with loadgen generate)" >&2
  exit 1
fi
DISTANCE="$(jq -r '.metric // "cosine"' "$DATASET/manifest.json")"
case "${DISTANCE,,}" in
  cosine) DISTANCE=Cosine ;; dot) DISTANCE=Dot ;; euclid | l2 | euclidean) DISTANCE=Euclid ;;
esac

# ------------------------------------------------------------------ collections
SETUP="$OUT/$NAME-cluster-setup.json"
echo '{}' >"$SETUP"
for s in "${SHARD_COUNTS[@]}"; do
  c="$NAME-s$s"
  curl -sf -X PUT "$URL/collections/$c" -H 'content-type: application/json' \
    -d "{\"vectors\":{\"size\":$DIM,\"distance\":\"$DISTANCE\"},\"index\":{\"type\":\"diskann\"},\"shard_number\":$s,\"replication_factor\":1}" >/dev/null
  loadgen ingest --url "$URL" --collection "$c" --dataset "$DATASET" --batch "${BATCH:-256}" \
    --clients 2 --index-timeout 0 --no-progress --out "$OUT/$c-ingest.json"
  t0=$(date +%s)
  curl -sf -X POST "$URL/collections/$c/flush" >/dev/null
  until curl -sf "$URL/collections/$c" | jq -e '.result.status == "green"' >/dev/null; do
    if [ $(($(date +%s) - t0)) -gt "$BUILD_TIMEOUT" ]; then
      echo "bench-cluster: $c not green after $BUILD_TIMEOUT s" >&2
      exit 1
    fi
    sleep 2
  done
  build_s=$(($(date +%s) - t0))
  info="$(curl -sf "$URL/collections/$c")"
  placement="$(ETCDCTL_API=3 etcdctl --endpoints "http://127.0.0.1:$FLASHVEC_ETCD_PORT" get \
    --print-value-only "/flashvec/collections/$c" 2>/dev/null | jq -c '.placement' || echo null)"
  # a graph search, not an exact scan of an unsealed segment: distance computations well below n
  probe="$(python3 - "$DATASET/query.fvecs" "$SEARCH_LIST" <<'PY'
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    (d,) = struct.unpack("<i", f.read(4))
    v = list(struct.unpack("<%df" % d, f.read(4 * d)))
print(json.dumps({"vector": v, "limit": 10, "with_stats": True,
                  "params": {"search_list": int(sys.argv[2])}}))
PY
)"
  stats="$(curl -sf -X POST "$URL/collections/$c/points/search" -H 'content-type: application/json' -d "$probe" | jq -c '.flashvec_stats')"
  points="$(jq '.result.points_count' <<<"$info")"
  echo "bench-cluster: $c: $points points, index built in $build_s s, placement $placement, one query: $stats"
  if [ "$(jq '.distance_computations' <<<"$stats")" -ge $((points / 2)) ]; then
    echo "bench-cluster: $c is searched exactly, not by its graph (is the index built?)" >&2
    exit 1
  fi
  jq --arg c "$c" --argjson s "$s" --argjson b "$build_s" --argjson p "$placement" \
    --argjson info "$info" --argjson stats "$stats" \
    '.[$c] = {shards: $s, build_seconds: $b, placement: $p, points: $info.result.points_count,
              segments: $info.result.segments_count, disk_bytes: $info.result.flashvec.disk_bytes,
              probe_stats: $stats}' "$SETUP" >"$SETUP.tmp" && mv "$SETUP.tmp" "$SETUP"
done

# ------------------------------------------------------------------ searches, back to back
# JIT warm-up: an unmeasured run on every collection first, so round 1 is not the JVMs' first
for s in "${SHARD_COUNTS[@]}"; do
  loadgen search --url "$URL" --collection "$NAME-s$s" --dataset "$DATASET" \
    --concurrency "$CONCURRENCY" --duration "${JIT_WARMUP:-10s}" --warmup 0s "${PARAMS[@]}" \
    --out "$FLASHVEC_CLUSTER_DIR/jit-warmup-s$s.json" >/dev/null
done
WARM=()
for r in $(seq 1 "$ROUNDS"); do
  for s in "${SHARD_COUNTS[@]}"; do
    c="$NAME-s$s"
    f="$OUT/$c-r$r.json"
    echo "bench-cluster: round $r, $s shard(s): warm, $CONCURRENCY clients, ${DURATION:-10s}"
    loadgen search --url "$URL" --collection "$c" --dataset "$DATASET" "${METRICS[@]}" \
      --concurrency "$CONCURRENCY" --duration "${DURATION:-10s}" --warmup "${WARMUP:-3s}" \
      "${PARAMS[@]}" --out "$f" --html "${f%.json}.html"
    WARM+=("$f")
  done
done
COLDS=()
if [ "$COLD" = "1" ]; then
  for s in "${SHARD_COUNTS[@]}"; do
    c="$NAME-s$s"
    f="$OUT/$c-cold.json"
    echo "bench-cluster: $s shard(s): cold, index evicted before each of $QUERIES queries, 1 client"
    loadgen search --url "$URL" --collection "$c" --dataset "$DATASET" "${METRICS[@]}" \
      --concurrency 1 --queries "$QUERIES" --warmup 0s --evict-each-query \
      "${PARAMS[@]}" --out "$f"
    COLDS+=("$f")
  done
fi
loadgen report "${WARM[@]}" --html "$OUT/$NAME-cluster.html" >/dev/null

# ------------------------------------------------------------------ summary
python3 - "$OUT/$NAME-cluster" "$SETUP" "$QUERY_NODES" "${#SHARD_COUNTS[@]}" "${WARM[@]}" -- "${COLDS[@]}" <<'PY'
import json, statistics, sys

base, setup_file, query_nodes, n_shard_counts = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rest = sys.argv[5:]
cut = rest.index("--")
warm_files, cold_files = rest[:cut], rest[cut + 1:]
setup = json.load(open(setup_file))

def load(f):
    r = json.load(open(f))
    return r, r["points"][0]

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

rows = {}
meta = None
for f in warm_files:
    r, p = load(f)
    meta = meta or r
    rows.setdefault(r["collection"], []).append(p)
cold = {}
rows_cold_queries = None
for f in cold_files:
    r, p = load(f)
    cold[r["collection"]] = p
    rows_cold_queries = p["queries"]

def io(p, k):
    return p.get("io", {}).get(k)

def node_cpu(p, pred):
    vals = [v.get("cpu_ms_per_query") for n, v in p.get("nodes", {}).items() if pred(n)]
    vals = [v for v in vals if v is not None]
    return sum(vals) if vals else None

summary = []
for c, ps in rows.items():
    s = setup[c]["shards"]
    cp = cold.get(c)
    hosting = sorted(n for n, v in ps[0].get("nodes", {}).items()
                     if (v.get("search_shard_searches_per_query") or 0) > 0.5)
    summary.append({
        "collection": c,
        "shards": s,
        "runs": len(ps),
        "nodes_searched": hosting,
        "placement": setup[c]["placement"],
        "build_seconds": setup[c]["build_seconds"],
        "qps": med([p["qps"] for p in ps]),
        "p50_ms": med([p["p50_ms"] for p in ps]),
        "p99_ms": med([p["p99_ms"] for p in ps]),
        "recall_at_10": med([p["recall_at_k"] for p in ps]),
        "shard_searches_per_query": med([io(p, "search_shard_searches_per_query") for p in ps]),
        "distance_computations_per_query": med([io(p, "search_distance_computations_per_query") for p in ps]),
        "nodes_visited_per_query": med([io(p, "search_nodes_visited_per_query") for p in ps]),
        "nodes_expanded_per_query": med([io(p, "search_nodes_expanded_per_query") for p in ps]),
        "pages_read_per_query_warm": med([io(p, "pages_read_per_query") for p in ps]),
        "cpu_ms_per_query_total": med([io(p, "cpu_ms_per_query") for p in ps]),
        "cpu_ms_per_query_proxy": med([node_cpu(p, lambda n: n.startswith("proxy")) for p in ps]),
        "cpu_ms_per_query_query_nodes": med([node_cpu(p, lambda n: n.startswith("query")) for p in ps]),
        "per_node_warm": ps[-1].get("nodes", {}),
        "cold": None if cp is None else {
            "qps": cp["qps"], "p99_ms": cp["p99_ms"], "recall_at_10": cp["recall_at_k"],
            "pages_read_per_query": io(cp, "pages_read_per_query"),
            "distance_computations_per_query": io(cp, "search_distance_computations_per_query"),
            "per_node": cp.get("nodes", {}),
        },
    })
summary.sort(key=lambda r: r["shards"])
one = summary[0]

def ratio(a, b):
    return None if a is None or not b else a / b

def f(v, fmt):
    return "n/a" if v is None else format(v, fmt)

lines = []
lines.append("| shards | query nodes searched | QPS | × 1 shard | P50 ms | P99 ms | × 1 shard | recall@10 "
             "| distance computations / query | × 1 shard | nodes expanded / query "
             "| pages read / query (cold) | × 1 shard | CPU ms / query: proxy + query nodes = total |")
lines.append("| " + " | ".join(["---"] * 14) + " |")
for r in summary:
    cold_pages = r["cold"]["pages_read_per_query"] if r["cold"] else None
    one_cold = one["cold"]["pages_read_per_query"] if one["cold"] else None
    lines.append("| " + " | ".join([
        str(r["shards"]),
        str(len(r["nodes_searched"])),
        f(r["qps"], ",.0f"),
        f(ratio(r["qps"], one["qps"]), ".2f") + "×",
        f(r["p50_ms"], ".2f"),
        f(r["p99_ms"], ".2f"),
        f(ratio(r["p99_ms"], one["p99_ms"]), ".2f") + "×",
        f(r["recall_at_10"], ".3f"),
        f(r["distance_computations_per_query"], ",.0f"),
        f(ratio(r["distance_computations_per_query"], one["distance_computations_per_query"]), ".2f") + "×",
        f(r["nodes_expanded_per_query"], ",.0f"),
        f(cold_pages, ",.1f"),
        f(ratio(cold_pages, one_cold), ".2f") + "×",
        f(r["cpu_ms_per_query_proxy"], ".2f") + " + " + f(r["cpu_ms_per_query_query_nodes"], ".2f")
        + " = " + f(r["cpu_ms_per_query_total"], ".2f"),
    ]) + " |")
p0 = rows[one["collection"]][0]
m = meta.get("machine", {})
machine = (f"{m.get('cpu_model', '?')}, {m.get('nproc', '?')} vCPU, "
           f"{round(m.get('mem_total_mb', 0) / 1024)} GiB, {m.get('java', '?')}")
head = (f"Dataset {meta['dataset_name']} ({meta['n']:,} × {meta['dim']}, {meta['distance']}), "
        f"{meta['date']}, machine: {machine}; {p0['concurrency']} clients, "
        f"params {json.dumps(p0['params'])}, {p0['seconds']:.0f} s per point, median of "
        f"{one['runs']} run(s) per shard count; {query_nodes} query nodes + proxy on one machine; "
        f"work summed over the proxy and all query nodes (/metrics deltas).")
node_names = []
for r in summary:
    for n in r["per_node_warm"]:
        if n not in node_names:
            node_names.append(n)
nl = ["| node | " + " | ".join(f"{r['shards']} shard(s): distance computations / CPU ms per query"
                                   for r in summary) + " |",
      "| " + " | ".join(["---"] * (len(summary) + 1)) + " |"]
for n in node_names:
    cells = []
    for r in summary:
        v = r["per_node_warm"].get(n, {})
        cells.append(f(v.get("search_distance_computations_per_query"), ",.0f") + " / "
                     + f(v.get("cpu_ms_per_query"), ".2f"))
    nl.append(f"| {n} | " + " | ".join(cells) + " |")
tail = ("\nPer node (last warm run of each shard count; a node with no shard of the collection "
        "shows only its idle CPU):\n\n" + "\n".join(nl) + "\n")
cold_note = ""
if one["cold"]:
    cold_note = (" Pages read: a cold search per query (index evicted before each of "
                 f"{rows_cold_queries} queries, 1 client).")
md = head + cold_note + "\n\n" + "\n".join(lines) + "\n" + tail
open(base + ".md", "w").write(md)
json.dump({"metadata": {k: meta[k] for k in ("dataset", "dataset_name", "n", "dim", "distance", "date", "machine")},
           "params": p0["params"], "concurrency": p0["concurrency"], "rows": summary},
          open(base + ".json", "w"), indent=2)
print(md)
PY
echo "bench-cluster: wrote $OUT/$NAME-cluster.md, $OUT/$NAME-cluster.json, $OUT/$NAME-cluster.html"
