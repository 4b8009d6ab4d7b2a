# FlashVec: one image for every role (standalone by default; FLASHVEC_ROLES selects proxy/query/index).
# Users get the public Temurin JRE; our scripts pass a locally built base (scripts/image/make-base-image.sh)
# because no registry is reachable on our machines:  docker build --build-arg BASE=flashvec/jre25:local .
ARG BASE=eclipse-temurin:25-jre
# The server starts from the jar extracted into plain jars, with an ahead-of-time class cache made by
# one training start (the context is refreshed on an empty data directory and the JVM exits before
# the web server binds), and the bean definitions Spring generated at build time (process-aot):
# about 0.4x the CPU of a plain start from the nested jar.
FROM ${BASE} AS prepare
COPY api-service/target/flashvec.jar /tmp/flashvec.jar
RUN java -Djarmode=tools -jar /tmp/flashvec.jar extract --destination /app \
 && mkdir /tmp/train \
 && java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx512m \
      -Dspring.aot.enabled=true -XX:AOTCacheOutput=/app/flashvec.aot -Dspring.context.exit=onRefresh -jar /app/flashvec.jar \
      --flashvec.data-dir=/tmp/train --flashvec.bind=127.0.0.1 >/tmp/train.log 2>&1 \
 || { cat /tmp/train.log; exit 1; }

FROM ${BASE}
COPY --from=prepare /app /app
RUN mkdir -p /data && chown 10001:10001 /data
# Containers usually reach the server through a published port, so listen on all interfaces here;
# on a host network (as in our tests) set FLASHVEC_BIND=127.0.0.1.
ENV FLASHVEC_PORT=8080 \
    FLASHVEC_BIND=0.0.0.0 \
    FLASHVEC_DATA_DIR=/data \
    JAVA_OPTS=""
USER 10001:10001
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD wget -q -O /dev/null "http://127.0.0.1:${FLASHVEC_PORT}/readyz" \
   || curl -fsS -o /dev/null "http://127.0.0.1:${FLASHVEC_PORT}/readyz" || exit 1
# The heap comes from the memory budget (FLASHVEC_MEMORY_BUDGET; default the container's memory
# limit), which the jar slices into native memory, heap, node cache and page cache and prints as
# -Xmx; a -Xmx or MaxRAMPercentage in JAVA_OPTS wins. A budget too small stops the container here.
ENTRYPOINT ["/bin/sh", "-c", "case \" $JAVA_OPTS \" in *' -Xmx'* | *MaxRAMPercentage* | *MaxHeapSize*) heap= ;; *) heap=$(java -Xmx64m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar /app/flashvec.jar --print-jvm-flags \"$@\") || exit 2 ;; esac; exec java $heap -Dspring.aot.enabled=true -XX:AOTCache=/app/flashvec.aot -XX:+ExitOnOutOfMemoryError -Djdk.nio.maxCachedBufferSize=1048576 -XX:TrimNativeHeapInterval=5000 --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED $JAVA_OPTS -jar /app/flashvec.jar \"$@\"", "flashvec"]
