#!/usr/bin/env bash
# Recall on fresh data: the queries' neighbours split between a sealed segment and the
# growing one, as in a collection that keeps taking new points. Rows FRESH..N of a load-gen dataset
# are ingested, flushed and indexed (the sealed segment); rows 0..FRESH are then upserted with
# their row numbers as ids (the growing segment, a live graph), and once the graph has caught up,
# `load-gen search` measures recall@10 against the dataset's ground truth over all N rows. Unlike
# `load-gen mixed`, whose inserts copy base rows (every growing point then has a sealed twin that
# answers for it), every true neighbour here lives in exactly one segment.
#
#   scripts/bench/bench-fresh.sh DATASET_DIR [MODES...]          (default: on)
#
# Modes: on — this build; NAME=JAR — another build's server jar (e.g. prev=/tmp/old.jar). Each
# mode starts from the same sealed snapshot.
#
# Env: PORT (18096), DATA (a fresh temp dir), OUT (bench-results), NAME (fresh), FRESH (24000),
#      SEARCH_LIST (20,40,60,100), CONCURRENCY (2), DURATION (10s), JAVA_OPTS (-Xmx6g).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATASET="$1"; shift
MODES="${*:-on}"
PORT="${PORT:-18096}"
DATA="${DATA:-$(mktemp -d /tmp/flashvec-fresh.XXXXXX)}"
OUT="${OUT:-$ROOT/bench-results}"
NAME="${NAME:-fresh}"
FRESH="${FRESH:-24000}"
# shellcheck source=scripts/bench/bench-lib.sh
. "$ROOT/scripts/bench/bench-lib.sh"
N=$(python3 -c "import os,struct,sys; f=open(sys.argv[1]+'/base.fvecs','rb'); d=struct.unpack('<i',f.read(4))[0]; print(os.path.getsize(sys.argv[1]+'/base.fvecs')//(4*d+4))" "$DATASET")

# growing points not yet in the live graph (or -1 while there is no growing segment)
backlog() {
  curl -sf "$URL/collections/$NAME" | python3 -c "
import json, sys
r = json.load(sys.stdin)['result']
g = [s for s in r['flashvec']['segments'] if s['state'] == 'growing']
print(g[0]['points'] - g[0].get('graph_points', 0) if g else -1)"
}

SNAP="$DATA/snapshot"
if [ ! -d "$SNAP" ]; then
  start_server "$DATA/flashvec-server.jar" "$SNAP" FLASHVEC_SEGMENT_SEAL_THRESHOLD_POINTS=1000000
  loadgen ingest --url "$URL" --collection "$NAME" --dataset "$DATASET" --index diskann \
    --rows "$FRESH:$N" --batch 256 --clients 2 --index-timeout 0 --no-progress
  curl -sf -X POST "$URL/collections/$NAME/flush" >/dev/null
  until curl -sf "$URL/collections/$NAME" | grep -q '"status":"green"'; do sleep 2; done
  stop_server
fi

for mode in $MODES; do
  jar="$DATA/flashvec-server.jar"; tag="$mode"
  case "$mode" in
    on) ;;
    *=*) tag="${mode%%=*}"; jar="${mode#*=}" ;;
    *) echo "mode must be on or NAME=JAR: $mode" >&2; exit 2 ;;
  esac
  run="$DATA/run-$tag"
  rm -rf "$run"; cp -r "$SNAP" "$run"
  start_server "$jar" "$run" FLASHVEC_SEGMENT_SEAL_THRESHOLD_POINTS=1000000
  loadgen ingest --url "$URL" --collection "$NAME" --dataset "$DATASET" --rows "0:$FRESH" \
    --batch 100 --clients 1 --index-timeout 0 --no-progress >/dev/null
  until [ "$(backlog)" = "0" ]; do sleep 1; done
  echo "$tag: $((N - FRESH)) sealed + $FRESH growing points (live graph complete)"
  loadgen search --url "$URL" --collection "$NAME" --dataset "$DATASET" \
    --concurrency "${CONCURRENCY:-2}" --duration 5s --search-list 60 \
    --out "$OUT/$NAME-$tag-warm.json" >/dev/null 2>&1
  loadgen search --url "$URL" --collection "$NAME" --dataset "$DATASET" \
    --concurrency "${CONCURRENCY:-2}" --duration "${DURATION:-10s}" \
    --search-list "${SEARCH_LIST:-20,40,60,100}" --out "$OUT/$NAME-$tag.json" 2>&1 |
    grep -E "recall" | sed "s/^/$tag /"
  stop_server
done
