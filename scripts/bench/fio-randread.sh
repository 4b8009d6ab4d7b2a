#!/usr/bin/env bash
# fio-randread.sh [DIR]: the device's own 4 KiB random-read speed, the yardstick a cold search is
# compared against: fio reads 4 KiB blocks at random offsets of a test file in DIR (default: the
# current directory; give the server's data directory so that it is the same disk) with O_DIRECT
# (no page cache), first one read in flight (queue depth 1, the latency of one read), then 32 (the
# IOPS the device sustains under load). Prints one JSON object on stdout:
#   {"device": "vda", "dir": ..., "size": "2G", "runtime_s": 20, "ioengine": "libaio", "block_bytes": 4096,
#    "qd1":  {"iops": ..., "mb_per_s": ..., "lat_mean_us": ..., "lat_p50_us": ..., "lat_p99_us": ...},
#    "qd32": {...}}
# (MB = 10^6 bytes, as in load-gen). The test file is written once and removed on exit.
# Installs fio (Debian) when it is missing. Every process's I/O on that disk shares it: run it when
# nothing else is benchmarking, and next to the search run it is compared with.
#
# Env: SIZE (file size, default 2G: larger than any device cache, small enough to write quickly),
#      RUNTIME (seconds per queue depth, default 20), IOENGINE (libaio), DEPTHS (1,32)
set -euo pipefail
DIR="${1:-.}"
SIZE="${SIZE:-2G}"
RUNTIME="${RUNTIME:-20}"
IOENGINE="${IOENGINE:-libaio}"
DEPTHS="${DEPTHS:-1,32}"

log() { echo "fio-randread: $*" >&2; }
fail() {
  log "FAILED: $*"
  exit 1
}

[ -d "$DIR" ] || fail "not a directory [dir=$DIR]"
if ! command -v fio >/dev/null; then
  log "installing fio (Debian)"
  apt-get install -y -q fio >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q fio >/dev/null; } \
    || fail "cannot install fio (apt-get install fio)"
fi

# the disk holding DIR, named as /sys/block names it (a partition counts on its disk)
device="unknown"
dev=$(stat -c '%Hd:%Ld' "$DIR" 2>/dev/null || true)
if [ -n "$dev" ] && [ -e "/sys/dev/block/$dev" ]; then
  sys=$(readlink -f "/sys/dev/block/$dev")
  [ -e "$sys/partition" ] && sys=$(dirname "$sys")
  device=$(basename "$sys")
fi

file="$DIR/fio-randread.$$.dat"
out=$(mktemp)
trap 'rm -f "$file" "$out" "$out".*' EXIT
log "device $device, file $file ($SIZE), ${RUNTIME}s per queue depth [$DEPTHS], $IOENGINE, O_DIRECT"
IFS=',' read -r -a depths <<<"$DEPTHS"
for qd in "${depths[@]}"; do
  [[ "$qd" =~ ^[0-9]+$ ]] && [ "$qd" -ge 1 ] || fail "not a queue depth [depth=$qd]"
  # fio lays the file out before the first job reads it; the timed window excludes that write
  fio --name=randread-qd"$qd" --filename="$file" --size="$SIZE" --rw=randread --bs=4k \
    --direct=1 --ioengine="$IOENGINE" --iodepth="$qd" --numjobs=1 --time_based \
    --runtime="$RUNTIME" --ramp_time=2 --randrepeat=0 --norandommap \
    --output-format=json --output="$out.$qd" >/dev/null \
    || fail "fio failed [depth=$qd]"
done

python3 - "$device" "$DIR" "$SIZE" "$RUNTIME" "$IOENGINE" "$out" "${depths[@]}" <<'EOF'
import json, os, sys
device, d, size, runtime, engine, out = sys.argv[1:7]
depths = sys.argv[7:]
result = {"device": device, "dir": os.path.abspath(d), "size": size, "runtime_s": int(runtime),
          "ioengine": engine, "block_bytes": 4096}
for qd in depths:
    with open(f"{out}.{qd}") as f:
        job = json.load(f)["jobs"][0]["read"]
    pct = job["clat_ns"].get("percentile", {})
    result[f"qd{qd}"] = {
        "iops": round(job["iops"], 1),
        "mb_per_s": round(job["bw_bytes"] / 1e6, 2),
        "lat_mean_us": round(job["lat_ns"]["mean"] / 1e3, 1),
        "lat_p50_us": round(pct.get("50.000000", 0) / 1e3, 1),
        "lat_p99_us": round(pct.get("99.000000", 0) / 1e3, 1),
    }
print(json.dumps(result, indent=2))
EOF
