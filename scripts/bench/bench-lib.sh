# Shared by the benchmark scripts that start their own standalone servers (source it after
# setting ROOT, PORT, DATA, OUT and NAME): builds the jars once and copies them into DATA (so a
# rebuild during a run changes nothing), and defines
#   loadgen ARGS...                  — load-gen with the copied jar
#   start_server JAR DIR [VAR=VALUE...] — a server on 127.0.0.1:PORT with data in DIR (extra
#                                      environment after the defaults); waits for /readyz
#   stop_server                      — stops it (also on exit)
mkdir -p "$OUT" "$DATA"
"$ROOT/flashvec" build >/dev/null
JAVA="${JAVA_HOME:-$(ls -d /usr/lib/jvm/*25* | head -n 1)}/bin/java"
cp "$ROOT/api-service/target/flashvec.jar" "$DATA/flashvec-server.jar"
cp "$ROOT/load-gen/target/load-gen.jar" "$DATA/load-gen.jar"
URL="http://127.0.0.1:$PORT"
PID=""
trap '[ -z "$PID" ] || kill $PID 2>/dev/null || true' EXIT

loadgen() { "$JAVA" --add-modules jdk.incubator.vector -Xmx4g -jar "$DATA/load-gen.jar" "$@"; }

start_server() {
  local jar="$1" dir="$2"
  shift 2
  env FLASHVEC_PORT="$PORT" FLASHVEC_DATA_DIR="$dir" "$@" \
    "$JAVA" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED ${JAVA_OPTS:--Xmx6g} \
    -jar "$jar" >>"$OUT/$NAME-server.log" 2>&1 &
  PID=$!
  until curl -sf "$URL/readyz" >/dev/null; do
    sleep 0.5
    kill -0 $PID 2>/dev/null || { tail -n 40 "$OUT/$NAME-server.log"; exit 1; }
  done
}

stop_server() {
  kill $PID 2>/dev/null || true
  wait $PID 2>/dev/null || true
  PID=""
}
