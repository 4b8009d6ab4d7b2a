#!/usr/bin/env bash
# Churn benchmark: on a copy of a data directory left by bench-standalone.sh, delete
# 30% of the points (ids 0..29999), re-insert them with new vectors (a dataset dir NEW30K whose
# base.fvecs has those 30,000 vectors), flush, compact, and search against the ground truth of
# the final data (dataset dir FINAL); then build the same final data fresh and search again.
#
#   python3 scripts/bench/make-churn-dataset.py DATASET NEW30K FINAL   # once
#   WORK=/tmp/churn SRC_DATA=... NEW30K=... FINAL=... scripts/bench/bench-churn.sh
set -euxo pipefail
J="${JAVA_HOME:-$(ls -d /usr/lib/jvm/*25* | head -n 1)}/bin/java"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$WORK"; cd "$WORK"
cp "$ROOT/api-service/target/flashvec.jar" flashvec-server.jar; cp "$ROOT/load-gen/target/load-gen.jar" .
rm -rf data; cp -r "$SRC_DATA" data; rm -f data/*.jar data/*.log data/*.json
FLASHVEC_PORT=18197 FLASHVEC_DATA_DIR=$PWD/data FLASHVEC_SEGMENT_SEAL_THRESHOLD_POINTS=100000000 $J --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx6g -jar flashvec-server.jar > server.log 2>&1 &
PID=$!
U=http://127.0.0.1:18197
until curl -sf $U/readyz >/dev/null; do sleep 0.5; done
LG="$J --add-modules jdk.incubator.vector -Xmx4g -jar load-gen.jar"
green() { until curl -sf $U/collections/$1 | grep -q '"status":"green"'; do sleep 3; done; }
for s in 0 10000 20000; do
  python3 -c "import json;print(json.dumps({'points':list(range($s,$s+10000))}))" > ids.json
  curl -sf -X POST "$U/collections/syn768/points/delete?wait=true" -H 'content-type: application/json' --data-binary @ids.json; echo
done
curl -sf $U/collections/syn768 | head -c 300; echo
$LG ingest --url $U --collection syn768 --dataset "$NEW30K" --batch 500 --clients 2 --index-timeout 0 --no-progress --out ingest-new.json
T0=$(date +%s)
curl -sf -X POST $U/collections/syn768/flush; echo
green syn768
curl -sf -X POST "$U/collections/syn768/compact?force=true"; echo
sleep 5; green syn768
echo "reindex+compaction took $(( $(date +%s) - T0 )) s"
curl -sf $U/collections/syn768 | head -c 600; echo
$LG search --url $U --collection syn768 --dataset "$FINAL" --concurrency 2 --duration 8s --warmup 3s --search-list 40,50,60,100 --out churned.json
$LG ingest --url $U --collection fresh --dataset "$FINAL" --batch 500 --clients 2 --index-timeout 0 --no-progress --out ingest-fresh.json
curl -sf -X POST $U/collections/fresh/flush; echo
green fresh
$LG search --url $U --collection fresh --dataset "$FINAL" --concurrency 2 --duration 8s --warmup 3s --search-list 40,50,60,100 --out fresh.json
kill $PID
