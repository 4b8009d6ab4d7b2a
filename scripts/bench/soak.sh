#!/usr/bin/env bash
# Soak benchmark: a standalone server under steady upserts, deletes, searches and compactions for
# hours, its memory, file descriptors, mappings and threads sampled, and a verdict.
#
#   scripts/bench/soak.sh [--duration 4h] [--sample-every 60s] [--out DIR] [-- LOADGEN-SOAK-ARGS...]
#   scripts/bench/soak.sh --analyze DIR     (the verdict of a finished run again, e.g. with other
#                                            tolerances)
#
# Starts `./flashvec run` on a free 127.0.0.1 port with its data in a temporary directory (JAVA_OPTS
# default: a fixed, pre-touched 1 GiB heap, so resident memory after start-up is not the heap
# growing into its maximum), fills a collection and runs `loadgen soak` against it (defaults below;
# anything after `--` is passed to it, e.g. `-- --upsert-rate 500 --key-space 200000`).
# Every --sample-every it appends to DIR/samples.csv:
#   elapsed_s, rss_kb, rss_anon_kb, rss_file_kb (/proc/PID/status), heap_used_bytes
#   (jvm_memory_used_bytes{area="heap"} summed, from /metrics) and heap_live_bytes (the same just
#   after a full collection that `jcmd PID GC.run` asks for; SOAK_FORCE_GC=0 skips it), fds
#   (/proc/PID/fd), maps (/proc/PID/maps lines), threads, points and segments (GET
#   /collections/NAME), the load generator's cumulative counts and errors, and the number of ERROR
#   lines in the server log.
# At the end DIR/summary.md gets the figures and the verdict. PASS if, over the second half of the
# run, the least-squares trend projects across that half a growth of anonymous resident memory
# below SOAK_RSS_TOLERANCE_MB (32; the heap is pre-touched, so this is native memory), of the live
# heap's floor (its least value over the last SOAK_FLOOR_WINDOW samples, 20: the live heap rises
# and falls with each compaction) below SOAK_HEAP_TOLERANCE (5 %) of its mean or 8 MiB, whichever
# is more, of fds below
# SOAK_FD_TOLERANCE (8) and of threads below SOAK_THREAD_TOLERANCE (4); no operation failed; the
# server logged no ERROR and is still alive. Exit status 0 on PASS, 1 on FAIL, 2 if it could not
# run. To end a run early with its summary, send SIGTERM to the load generator (its pid is printed
# at the start).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DURATION="4h"
SAMPLE_EVERY="60s"
OUT=""
ANALYZE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION="$2"; shift 2 ;;
    --sample-every) SAMPLE_EVERY="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --analyze) ANALYZE="$2"; shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
EXTRA=("$@")

# analyze DIR: DIR/summary.md from DIR/samples.csv, DIR/loadgen.json and DIR/run.env; exit status
# 0 on PASS, 1 on FAIL.
analyze() {
  local dir="$1"
  # shellcheck disable=SC1091
  . "$dir/run.env"
  python3 - "$dir" "$LOADGEN_STATUS" "$SERVER_ALIVE" "$DURATION" "$SAMPLE_EVERY" "$JAVA_OPTS" "$EXTRA_ARGS" <<'PY'
import csv, json, os, platform, sys, datetime

out, lg_status, alive, duration, every, java_opts, extra = sys.argv[1:8]
lg_status, alive = int(lg_status), alive == "1"
rss_tol_mb = float(os.environ.get("SOAK_RSS_TOLERANCE_MB", "32"))
heap_tol = float(os.environ.get("SOAK_HEAP_TOLERANCE", "0.05"))
mem_tol = 0.05  # reported figures only
fd_tol = float(os.environ.get("SOAK_FD_TOLERANCE", "8"))
thr_tol = float(os.environ.get("SOAK_THREAD_TOLERANCE", "4"))
rows = list(csv.DictReader(open(os.path.join(out, "samples.csv"))))
summary = json.load(open(os.path.join(out, "loadgen.json"))) if os.path.exists(os.path.join(out, "loadgen.json")) else {}
# The live heap follows the data's cycle (a growing segment fills, a compaction drops it), a
# sawtooth whose phase at the end would tilt a trend; its floor, the least live heap over the last
# `window` samples, is what a leak raises.
window = int(os.environ.get("SOAK_FLOOR_WINDOW", "20"))
for i, r in enumerate(rows):
    r["heap_floor"] = min(float(x["heap_live_bytes"] or 0) for x in rows[max(0, i - window + 1): i + 1])

def col(name, rs):
    return [(float(r["elapsed_s"]), float(r[name] or 0)) for r in rs]

def slope(pts):  # least squares, units per second
    n = len(pts)
    if n < 2:
        return 0.0
    mx = sum(x for x, _ in pts) / n
    my = sum(y for _, y in pts) / n
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return 0.0 if sxx == 0 else sum((x - mx) * (y - my) for x, y in pts) / sxx

half = rows[len(rows) // 2:] if len(rows) >= 4 else rows
first = rows[: len(rows) // 2] if len(rows) >= 4 else rows
span = (float(half[-1]["elapsed_s"]) - float(half[0]["elapsed_s"])) if len(half) > 1 else 0.0
checks, figures = [], []

def trend(name, label, unit, scale, tol, relative, floor=0.0):
    pts = col(name, half)
    vals = [y for _, y in pts]
    mean = sum(vals) / len(vals) if vals else 0
    s = slope(pts)
    growth = s * span
    limit = max(tol * mean if relative else tol, floor)
    ok = growth <= limit
    figures.append((label, unit, min(vals) / scale, mean / scale, max(vals) / scale,
                    slope(col(name, first)) * 3600 / scale, s * 3600 / scale, growth / scale, limit / scale, ok))
    return ok

ok = True
if not rows:
    checks.append(("samples taken", False))
    ok = False
else:
    for args, limit in [(("rss_anon_kb", "anonymous RSS", "MiB", 1024, rss_tol_mb * 1024, False), "%g MiB" % rss_tol_mb),
                        (("heap_floor", "live heap after GC, floor of %d samples" % window, "MiB", 1 << 20, heap_tol, True, 8 << 20), "%g %% or 8 MiB" % (heap_tol * 100)),
                        (("fds", "open file descriptors", "", 1, fd_tol, False), "%g" % fd_tol),
                        (("threads", "threads", "", 1, thr_tol, False), "%g" % thr_tol)]:
        r = trend(*args)
        checks.append((f"{args[1]}: growth over the second half below {limit}", r))
        ok &= r
    for args in [("heap_live_bytes", "live heap after GC", "MiB", 1 << 20, mem_tol, True),
                 ("rss_kb", "RSS (total)", "MiB", 1024, mem_tol, True),
                 ("rss_file_kb", "file-backed RSS", "MiB", 1024, mem_tol, True),
                 ("heap_used_bytes", "heap used", "MiB", 1 << 20, mem_tol, True),
                 ("maps", "mapped regions", "", 1, fd_tol, False)]:
        trend(*args)  # reported, not judged: page cache and GC cycles move these
errors = int(summary.get("errors", -1))
log_errors = int(rows[-1]["server_log_errors"]) if rows else -1
# 143: stopped early with SIGTERM (its summary is still written)
finished = lg_status == 0 or (lg_status == 143 and bool(summary))
for name, good in [("no failed operation (load generator errors = %d, exit status %d)" % (errors, lg_status), errors == 0 and finished),
                   ("no ERROR in the server log (%d)" % log_errors, log_errors == 0),
                   ("server alive at the end", alive)]:
    checks.append((name, good))
    ok &= good

md = []
md.append("# Soak run %s\n" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
md.append("**Verdict: %s**\n" % ("PASS" if ok else "FAIL"))
md.append("- duration %s, a sample every %s, %d samples; JAVA_OPTS `%s`; extra load-gen options `%s`" % (duration, every, len(rows), java_opts, extra or "none"))
md.append("- machine: %s, %s" % (platform.platform(), summary.get("machine", {})))
if rows:
    md.append("- collection at the end: %s points in %s segments" % (rows[-1]["points"], rows[-1]["segments"]))
md.append("")
md.append("| check | result |\n|---|---|")
for name, good in checks:
    md.append("| %s | %s |" % (name, "pass" if good else "**FAIL**"))
md.append("")
md.append("Second half: %.0f s. Trends are least-squares slopes; growth = slope × the second half's span.\n" % span)
md.append("| figure | unit | min (2nd half) | mean | max | trend 1st half /h | trend 2nd half /h | growth over 2nd half | limit | judged |")
md.append("|---|---|---|---|---|---|---|---|---|---|")
for i, (label, unit, mn, mean, mx, s1, s2, g, lim, good) in enumerate(figures):
    judged = "pass" if good else "**FAIL**"
    if i >= 4:
        judged = "reported only"
    md.append("| %s | %s | %.1f | %.1f | %.1f | %+.2f | %+.2f | %+.2f | %.2f | %s |" % (label, unit or "count", mn, mean, mx, s1, s2, g, lim, judged))
md.append("")
if summary:
    md.append("| stream | target rate /s | operations | achieved /s | errors | lag resets | p50 ms | p99 ms | max ms |")
    md.append("|---|---|---|---|---|---|---|---|---|")
    for k in ("upserts", "deletes", "searches", "compactions"):
        s = summary.get(k)
        if s:
            md.append("| %s | %.3g | %d | %.3g | %d | %d | %.1f | %.1f | %.1f |" % (k, s["target_rate"], s["operations"], s["achieved_rate"], s["errors"], s["lag_resets"], s["p50_ms"], s["p99_ms"], s["max_ms"]))
    md.append("\n(upsert and delete rates are requests of `batch` points.)")
open(os.path.join(out, "summary.md"), "w").write("\n".join(md) + "\n")
print("\n".join(md))
sys.exit(0 if ok else 1)
PY
}

if [ -n "$ANALYZE" ]; then
  analyze "$ANALYZE"
  exit $?
fi

seconds_of() { # 90s, 15m, 4h or a bare number of seconds
  local v="$1"
  case "$v" in
    *h) echo $(( ${v%h} * 3600 )) ;;
    *m) echo $(( ${v%m} * 60 )) ;;
    *s) echo "${v%s}" ;;
    *) echo "$v" ;;
  esac
}
DURATION_S="$(seconds_of "$DURATION")"
SAMPLE_S="$(seconds_of "$SAMPLE_EVERY")"
[ "$DURATION_S" -gt 0 ] && [ "$SAMPLE_S" -gt 0 ] || { echo "soak: bad --duration or --sample-every" >&2; exit 2; }

STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
OUT="${OUT:-$ROOT/bench-results/soak-$STAMP}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/flashvec-soak.XXXXXX")"
COLLECTION="soak"
SERVER_PID=""
LOADGEN_PID=""
cleanup() {
  [ -z "$LOADGEN_PID" ] || kill "$LOADGEN_PID" 2>/dev/null || true
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
PORT="${SOAK_PORT:-$(free_port)}"
URL="http://127.0.0.1:$PORT"

export JAVA_OPTS="${JAVA_OPTS:--Xms1g -Xmx1g -XX:+AlwaysPreTouch}"
FLASHVEC_PORT="$PORT" "$ROOT/flashvec" run --flashvec.port="$PORT" --flashvec.bind=127.0.0.1 \
  --flashvec.data-dir="$WORK/data" >"$OUT/server.log" 2>&1 &
SERVER_PID=$! # `flashvec run` execs the JVM: this is the server's pid
for _ in $(seq 1 600); do
  curl -fsS -o /dev/null "$URL/readyz" 2>/dev/null && break
  kill -0 "$SERVER_PID" 2>/dev/null || { tail -n 30 "$OUT/server.log" >&2; echo "soak: server exited" >&2; exit 2; }
  sleep 0.5
done
curl -fsS -o /dev/null "$URL/readyz" || { echo "soak: server not ready" >&2; exit 2; }

# `flashvec run` built both jars if they were stale and runs a private copy of the server's; take
# one of the load generator's too, so a rebuild while the soak runs replaces neither.
cp "$ROOT/load-gen/target/load-gen.jar" "$WORK/load-gen.jar"
JAVA_BIN="$(ls -d /usr/lib/jvm/*25*/bin/java 2>/dev/null | head -n 1)"
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA_BIN="$JAVA_HOME/bin/java"; fi

# Defaults: modest rates for a small shared machine, a forced compaction every 5 minutes; an
# option given after `--` replaces its default.
DEFAULTS=(--dim 96 --key-space 100000 --upsert-rate 200 --delete-rate 50 --batch 50
  --search-rate 20 --compact-every 5m --seed 20261126)
ARGS=()
for ((i = 0; i < ${#DEFAULTS[@]}; i += 2)); do
  case " ${EXTRA[*]:-} " in
    *" ${DEFAULTS[i]} "* | *" ${DEFAULTS[i]}="*) ;;
    *) ARGS+=("${DEFAULTS[i]}" "${DEFAULTS[i + 1]}") ;;
  esac
done
"$JAVA_BIN" -Xmx512m -jar "$WORK/load-gen.jar" soak --url "$URL" --collection "$COLLECTION" \
  "${ARGS[@]}" --duration "${DURATION_S}s" --progress "$OUT/loadgen.csv" \
  --progress-every "${SAMPLE_S}s" --out "$OUT/loadgen.json" ${EXTRA[@]+"${EXTRA[@]}"} \
  >"$OUT/loadgen.log" 2>&1 &
LOADGEN_PID=$!
JCMD="$(dirname "$JAVA_BIN")/jcmd"

status_kb() { awk -v k="$1:" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' "/proc/$SERVER_PID/status" 2>/dev/null || echo 0; }
metric_sum() { # sums the samples of metric $1 whose labels contain $2
  awk -v m="$1" -v l="$2" 'index($0, m) == 1 && index($0, l) > 0 { s += $NF } END { printf "%.0f", s }'
}

echo "elapsed_s,rss_kb,rss_anon_kb,rss_file_kb,heap_used_bytes,heap_live_bytes,fds,maps,threads,points,segments,upserted_points,deleted_points,searches,compactions,loadgen_errors,server_log_errors" >"$OUT/samples.csv"
START="$(date +%s)"
echo "soak: server pid $SERVER_PID on $URL, load generator pid $LOADGEN_PID, samples every ${SAMPLE_S}s for ${DURATION_S}s into $OUT" >&2
while kill -0 "$LOADGEN_PID" 2>/dev/null; do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "soak: the server died" >&2
    break
  fi
  now="$(date +%s)"
  metrics="$(curl -fsS --max-time 10 "$URL/metrics" 2>/dev/null || true)"
  heap="$(printf '%s\n' "$metrics" | metric_sum 'jvm_memory_used_bytes{' 'area="heap"')"
  live=""
  if [ "${SOAK_FORCE_GC:-1}" = "1" ] && "$JCMD" "$SERVER_PID" GC.run >/dev/null 2>&1; then
    # the heap right after a full collection is what is still reachable
    live="$(curl -fsS --max-time 10 "$URL/metrics" 2>/dev/null |
      metric_sum 'jvm_memory_used_bytes{' 'area="heap"')"
  fi
  info="$(curl -fsS --max-time 10 "$URL/collections/$COLLECTION" 2>/dev/null || true)"
  points="$(printf '%s' "$info" | sed -n 's/.*"points_count":\([0-9]*\).*/\1/p')"
  segments="$(printf '%s' "$info" | sed -n 's/.*"segments_count":\([0-9]*\).*/\1/p')"
  fds="$(ls "/proc/$SERVER_PID/fd" 2>/dev/null | wc -l)"
  maps="$(wc -l <"/proc/$SERVER_PID/maps" 2>/dev/null || echo 0)"
  threads="$(status_kb Threads)"
  progress="$(tail -n 1 "$OUT/loadgen.csv" 2>/dev/null | grep -E '^[0-9]' || echo ',0,0,0,0,0')"
  counts="$(printf '%s' "$progress" | cut -d, -f2-6)"
  log_errors="$(grep -c ' ERROR ' "$OUT/server.log" || true)"
  echo "$((now - START)),$(status_kb VmRSS),$(status_kb RssAnon),$(status_kb RssFile),${heap:-0},${live:-0},$fds,$maps,$threads,${points:-},${segments:-},$counts,${log_errors:-0}" >>"$OUT/samples.csv"
  slept=0
  while [ "$slept" -lt "$SAMPLE_S" ] && kill -0 "$LOADGEN_PID" 2>/dev/null; do
    sleep 1
    slept=$((slept + 1))
  done
done
LOADGEN_STATUS=0
wait "$LOADGEN_PID" || LOADGEN_STATUS=$?
LOADGEN_PID=""
SERVER_ALIVE=1
kill -0 "$SERVER_PID" 2>/dev/null || SERVER_ALIVE=0

printf 'LOADGEN_STATUS=%q\nSERVER_ALIVE=%q\nDURATION=%q\nSAMPLE_EVERY=%q\nJAVA_OPTS=%q\nEXTRA_ARGS=%q\n' \
  "$LOADGEN_STATUS" "$SERVER_ALIVE" "$DURATION" "$SAMPLE_EVERY" "$JAVA_OPTS" "${EXTRA[*]:-}" >"$OUT/run.env"
set +e
analyze "$OUT"
VERDICT=$?
echo "soak: results in $OUT (samples.csv, summary.md, loadgen.json, server.log)" >&2
exit $VERDICT
