#!/usr/bin/env bash
# compose-check.sh — runs docker-compose.yml's cluster profile for real: etcd, a proxy, two query
# nodes and an index node from the built images, all healthy (depends_on: service_healthy); then
# through the proxy a collection with 2 shards and replication_factor 2, an upsert, a search, a
# count; a query node is SIGKILLed and searches stay complete (the other replica answers); then
# `down -v`. Free loopback ports and its own project name, so it never meets a running cluster.
#
# Env: FLASHVEC_IMAGE (flashvec:latest), FLASHVEC_ETCD_IMAGE (flashvec/etcd:local): both must exist
# (./flashvec image builds them). Needs docker-compose (installed from Debian when missing).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export FLASHVEC_IMAGE="${FLASHVEC_IMAGE:-flashvec:latest}"
export FLASHVEC_ETCD_IMAGE="${FLASHVEC_ETCD_IMAGE:-flashvec/etcd:local}"
export JAVA_OPTS="${JAVA_OPTS:--Xmx384m -XX:TieredStopAtLevel=1}"
PROJECT="flashvec-check-$$"

log() { echo "compose-check: $*" >&2; }
fail() {
  log "FAILED: $*"
  exit 1
}

if ! command -v docker-compose >/dev/null; then
  log "installing docker-compose (Debian)"
  apt-get install -y -q docker-compose >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q docker-compose >/dev/null; }
fi
for img in "$FLASHVEC_IMAGE" "$FLASHVEC_ETCD_IMAGE"; do
  docker image inspect "$img" >/dev/null 2>&1 || fail "image $img is missing (./flashvec image builds it)"
done

# Both files parse, with the same services (docker-compose.bridge.yml cannot run here: no bridge).
for f in docker-compose.yml docker-compose.bridge.yml; do
  docker-compose -f "$ROOT/$f" --project-directory "$ROOT" --profile cluster config -q || fail "$f does not parse"
done
docker-compose -f "$ROOT/docker-compose.yml" -f "$ROOT/docker-compose.tls.yml" --project-directory "$ROOT" \
  --profile cluster config -q || fail "docker-compose.tls.yml does not apply to docker-compose.yml"
[ "$(docker-compose -f "$ROOT/docker-compose.yml" config --services | sort)" = \
  "$(docker-compose -f "$ROOT/docker-compose.bridge.yml" config --services | sort)" ] ||
  fail "docker-compose.yml and docker-compose.bridge.yml define different services"

# Nine free loopback ports (the kernel picks them; nothing random here).
read -r P_PROXY P_Q1 P_Q2 P_IX G_Q1 G_Q2 G_IX E_CLIENT E_PEER < <(python3 - <<'EOF'
import socket
socks = []
for _ in range(9):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
)
export FLASHVEC_PORT=$P_PROXY FLASHVEC_QUERY1_PORT=$P_Q1 FLASHVEC_QUERY2_PORT=$P_Q2 FLASHVEC_INDEX_PORT=$P_IX
export FLASHVEC_QUERY1_GRPC_PORT=$G_Q1 FLASHVEC_QUERY2_GRPC_PORT=$G_Q2 FLASHVEC_INDEX_GRPC_PORT=$G_IX
export FLASHVEC_ETCD_PORT=$E_CLIENT FLASHVEC_ETCD_PEER_PORT=$E_PEER

compose() { docker-compose -f "$ROOT/docker-compose.yml" --project-directory "$ROOT" -p "$PROJECT" --profile cluster "$@"; }
cleanup() {
  local status=$?
  if [ $status -ne 0 ]; then
    compose ps >&2 || true
    compose logs --tail=40 >&2 || true
  fi
  compose down -v >/dev/null 2>&1 || true
}
trap cleanup EXIT

log "up (project $PROJECT, proxy on 127.0.0.1:$P_PROXY, images $FLASHVEC_IMAGE + $FLASHVEC_ETCD_IMAGE)"
start=$(date +%s)
compose up -d >/dev/null 2>&1 || fail "docker-compose up"
# `up -d` waited for the dependencies' healthchecks; the proxy, last in line, is only started.
[ -z "$(compose ps -q standalone 2>/dev/null)" ] || fail "the standalone service runs beside the cluster"
for s in etcd query-1 query-2 index proxy; do
  id="$(compose ps -q "$s")"
  [ -n "$id" ] || fail "service $s has no container"
  for _ in $(seq 1 120); do
    h="$(docker inspect -f '{{.State.Health.Status}}' "$id")"
    [ "$h" != starting ] && break
    sleep 1
  done
  [ "$h" = healthy ] || fail "service $s is $h"
done
log "all services healthy after $(($(date +%s) - start)) s"

P="http://127.0.0.1:$P_PROXY"
# call METHOD PATH [BODY] -> prints the body, fails on a non-2xx status
call() {
  curl -fsS -X "$1" "$P$2" -H 'content-type: application/json' ${3:+-d "$3"} || fail "$1 $2"
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }

call PUT /collections/docs '{"vectors":{"size":4,"distance":"Cosine"},"shard_number":2,"replication_factor":2}' >/dev/null
call PUT '/collections/docs/points?wait=true' '{"points":[
  {"id":1,"vector":[0.9,0.1,0,0],"payload":{"city":"Berlin"}},{"id":2,"vector":[0,1,0,0]},
  {"id":3,"vector":[0,0,1,0]},{"id":4,"vector":[0,0,0,1]},{"id":5,"vector":[0.5,0.5,0,0]}]}' >/dev/null
SEARCH='{"vector":[1,0,0,0],"limit":2,"with_payload":true}'
r="$(call POST /collections/docs/points/search "$SEARCH")"
[ "$(echo "$r" | json 'd["result"][0]["id"]')" = 1 ] || fail "search: $r"
[ "$(echo "$r" | json 'd["result"][0]["payload"]["city"]')" = Berlin ] || fail "payload: $r"
[ "$(echo "$r" | json 'd["result"][1]["id"]')" = 5 ] || fail "search order: $r"
c="$(call POST /collections/docs/points/count '{"exact":true}')"
[ "$(echo "$c" | json 'd["result"]["count"]')" = 5 ] || fail "count: $c"
for q in 1 2; do
  n="$(docker exec "$(compose ps -q query-$q)" ls /data/collections | tr '\n' ' ')"
  [ "$n" = "docs.s0 docs.s1 " ] || fail "query-$q holds [$n], expected both shards' replicas"
done
log "sharded, replicated collection: upsert, search, count ok; both query nodes hold both shards"

docker kill "$(compose ps -q query-1)" >/dev/null
r="$(call POST /collections/docs/points/search "$SEARCH")"
[ "$(echo "$r" | json 'd["result"][0]["id"]')" = 1 ] || fail "search with query-1 down: $r"
[ "$(echo "$r" | json 'd.get("partial", False)')" = False ] || fail "partial with a replica left: $r"
log "query-1 killed: searches still complete from the other replicas"

compose down -v >/dev/null 2>&1 || fail "docker-compose down"
[ -z "$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT")" ] || fail "containers left after down"
[ -z "$(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT")" ] || fail "volumes left after down -v"
log "ok ($(($(date +%s) - start)) s)"
