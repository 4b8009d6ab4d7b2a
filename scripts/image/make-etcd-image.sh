#!/usr/bin/env bash
# make-etcd-image.sh TAG BASE — a local etcd image for the Compose cluster profile and the image
# tests, with no image registry: Debian's etcd and etcdctl (package etcd-server/etcd-client, only
# libc needed) copied FROM our local base image (scripts/image/make-base-image.sh: glibc + busybox).
#
# Laid out like the upstream quay.io/coreos/etcd image (binaries in /usr/local/bin, data under
# /var/lib/etcd, CMD etcd), so docker-compose.yml runs either one with the same command and
# healthcheck; users get the upstream image by default (FLASHVEC_ETCD_IMAGE).
set -euo pipefail

TAG=${1:?usage: make-etcd-image.sh TAG BASE}
BASE=${2:?usage: make-etcd-image.sh TAG BASE}
ETCD=$(command -v etcd || true)
ETCDCTL=$(command -v etcdctl || true)
[ -n "$ETCD" ] && [ -n "$ETCDCTL" ] || {
  echo "make-etcd-image: etcd and etcdctl are needed (apt-get install etcd-server etcd-client)" >&2
  exit 1
}
docker image inspect "$BASE" >/dev/null 2>&1 || {
  echo "make-etcd-image: base image $BASE is missing (scripts/image/make-base-image.sh builds it)" >&2
  exit 1
}
# Debian's binaries link glibc only; the base image carries the host's glibc.
if ldd "$ETCD" | grep -v -E 'linux-vdso|libc\.so|ld-linux' | grep -q '=>'; then
  echo "make-etcd-image: $ETCD needs more than libc:" >&2
  ldd "$ETCD" >&2
  exit 1
fi

CTX=$(mktemp -d)
trap 'rm -rf "$CTX"' EXIT
cp "$ETCD" "$ETCDCTL" "$CTX/"
cat >"$CTX/Dockerfile" <<'EOF'
ARG BASE
FROM ${BASE}
COPY etcd etcdctl /usr/local/bin/
RUN mkdir -p /var/lib/etcd && chmod 700 /var/lib/etcd
WORKDIR /var/lib/etcd
ENV ETCDCTL_API=3
EXPOSE 2379 2380
CMD ["/usr/local/bin/etcd"]
EOF
docker build -q --build-arg BASE="$BASE" \
  --label "org.opencontainers.image.description=etcd $("$ETCD" --version | head -n 1 | awk '{print $3}') from Debian, for FlashVec tests" \
  -t "$TAG" "$CTX" >/dev/null 2>"$CTX/build.err" || { cat "$CTX/build.err" >&2; exit 1; }
version=$(docker run --rm --network host "$TAG" /usr/local/bin/etcd --version)
echo "make-etcd-image: built $TAG (${version%%$'\n'*})"
