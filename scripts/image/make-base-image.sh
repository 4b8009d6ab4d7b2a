#!/usr/bin/env bash
# make-base-image.sh — build a local Docker base image with a Java 25 runtime, with NO image registry.
#
# How: jlink (Temurin 25 ships a "linkable runtime", JEP 493, so no jmods/ dir is needed) makes a
# trimmed runtime; the host's glibc shared libraries that the runtime needs are copied in (found
# with ldd); static busybox gives /bin/sh + coreutils (Testcontainers' exec-based checks and
# healthchecks want a shell); then `docker import` turns the rootfs tarball into an image.
#
# Needs: a running dockerd, Temurin 25 JDK, busybox-static (apt-get install -y busybox-static).
# Measured on the polyglot kind (2 cores): ~15 s in all, image ~90 MB.
#
# Usage: make-base-image.sh [TAG]        (default tag: flashvec/jre25:local)
#   env JDK=/path/to/jdk25   MODULES=comma,list   KEEP_WORK=1
set -euo pipefail

TAG=${1:-flashvec/jre25:local}
JDK=${JDK:-${JAVA_HOME:-$(ls -d /usr/lib/jvm/*25* 2>/dev/null | head -n1)}}
# java.se covers Spring Boot (java.desktop for java.beans, java.sql, java.naming, java.management...);
# jdk.incubator.vector: jvector SIMD (FlashVec passes --add-modules for it);
# jdk.unsupported is needed by Netty/gRPC (sun.misc.Unsafe); jdk.crypto.ec / jdk.naming.dns for TLS & DNS.
MODULES=${MODULES:-java.se,jdk.incubator.vector,jdk.unsupported,jdk.management,jdk.management.agent,jdk.crypto.ec,jdk.zipfs,jdk.net,jdk.jfr,jdk.jdwp.agent,jdk.httpserver,jdk.naming.dns,jdk.localedata}
BUSYBOX=${BUSYBOX:-/bin/busybox}

command -v docker >/dev/null || { echo "docker client missing" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "dockerd not reachable" >&2; exit 1; }
[ -x "$JDK/bin/jlink" ] || { echo "no jlink in $JDK" >&2; exit 1; }
[ -x "$BUSYBOX" ] || { echo "no static busybox at $BUSYBOX (apt-get install -y busybox-static)" >&2; exit 1; }

WORK=$(mktemp -d)
ROOT=$WORK/rootfs
cleanup() { [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT

# 1. merged-/usr skeleton (same layout as Debian 12)
mkdir -p "$ROOT"/{usr/bin,usr/lib/x86_64-linux-gnu,usr/lib64,etc,tmp,opt,root,app,proc,sys,dev,run,var/tmp}
ln -s usr/bin "$ROOT/bin"; ln -s usr/bin "$ROOT/sbin"
ln -s usr/lib "$ROOT/lib"; ln -s usr/lib64 "$ROOT/lib64"
chmod 1777 "$ROOT/tmp" "$ROOT/var/tmp"

# 2. trimmed Java runtime
"$JDK/bin/jlink" --add-modules "$MODULES" --strip-debug --no-header-files --no-man-pages \
  --compress=zip-6 --output "$ROOT/opt/java"

# 3. glibc & friends needed by the runtime (skip X11/ALSA-only libs: the image is headless)
LIBS=$(
  find "$ROOT/opt/java" -type f \( -name '*.so' -o -path '*/bin/*' \) \
    ! -name libawt_xawt.so ! -name libjsound.so ! -name libsplashscreen.so |
  while read -r f; do
    LD_LIBRARY_PATH="$ROOT/opt/java/lib:$ROOT/opt/java/lib/server" ldd "$f" 2>/dev/null || true
  done | awk '/=> \// {print $3} /^\s*\/lib/ {print $1}' | grep -v "^$ROOT" | sort -u)
for l in $LIBS; do cp -L "$l" "$ROOT/usr/lib/x86_64-linux-gnu/"; done
cp -L /lib64/ld-linux-x86-64.so.2 "$ROOT/usr/lib/x86_64-linux-gnu/"
ln -s ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$ROOT/usr/lib64/ld-linux-x86-64.so.2"
# libgcc_s is dlopen'ed by glibc for pthread_cancel/unwinding; include it although ldd doesn't list it
cp -L /lib/x86_64-linux-gnu/libgcc_s.so.1 "$ROOT/usr/lib/x86_64-linux-gnu/" 2>/dev/null || true

# 4. busybox shell + applets
cp "$BUSYBOX" "$ROOT/usr/bin/busybox"
for a in $("$BUSYBOX" --list); do [ -e "$ROOT/usr/bin/$a" ] || ln -s busybox "$ROOT/usr/bin/$a"; done

# 5. minimal /etc
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$ROOT/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$ROOT/etc/group"
printf 'hosts: files dns\n' > "$ROOT/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' > "$ROOT/etc/hosts"

# 6. import (no registry involved)
tar -C "$ROOT" --numeric-owner -cf - . | docker import \
  --change 'ENV JAVA_HOME=/opt/java' \
  --change 'ENV PATH=/opt/java/bin:/usr/bin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'WORKDIR /app' \
  --change 'CMD ["java","-version"]' \
  - "$TAG"
docker image ls "$TAG"
docker run --rm --network host "$TAG" java -version
