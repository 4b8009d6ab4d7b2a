# FlashVec: one image for every role (standalone by default; FLASHVEC_ROLES selects proxy/query/index).
# Users get the public Temurin JRE; our scripts pass a locally built base (scripts/image/make-base-image.sh)
# because no registry is reachable on our machines:  docker build --build-arg BASE=flashvec/jre25:local .
ARG BASE=eclipse-temurin:25-jre
FROM ${BASE}
COPY api-service/target/flashvec.jar /app/flashvec.jar
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
# Heap from the container's memory limit; the rest of the memory is page cache for the index files.
ENTRYPOINT ["/bin/sh", "-c", "exec java -XX:MaxRAMPercentage=50 -XX:+ExitOnOutOfMemoryError --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED $JAVA_OPTS -jar /app/flashvec.jar \"$@\"", "flashvec"]
