#!/usr/bin/env bash
# memlimit.sh LIMIT COMMAND...: runs COMMAND with its memory (anonymous memory AND page cache)
# capped at LIMIT (bytes, or with a K/M/G suffix) in a new child of this process's memory cgroup, so
# that a server whose index is larger than the memory it is given can be measured without a bigger
# machine; reads of data beyond the cap go to the disk. The JVM sees the cap (its default heap
# becomes a quarter of it). Prints the peak usage the cgroup recorded (page cache included) when
# COMMAND ends, and exits with COMMAND's status (137 when the kernel's OOM killer ended it).
# Works with cgroup v1 (memory controller) and v2; needs root. The cgroup is removed on exit.
# Example: scripts/bench/memlimit.sh 1G ./flashvec run
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 LIMIT COMMAND..." >&2; exit 2; }
limit=$1; shift
bytes=$(numfmt --from=iec "${limit^^}") || { echo "memlimit: bad LIMIT [limit=$limit]" >&2; exit 2; }
name="memlimit-$$"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then            # cgroup v2
  base=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
  cg="$base/$name"; mkdir "$cg"
  if [ ! -f "$cg/memory.max" ]; then
    rmdir "$cg"
    echo "memlimit: the memory controller is not enabled for children of $base (add +memory to" \
      "its cgroup.subtree_control, which needs a cgroup without processes of its own)" >&2
    exit 1
  fi
  echo "$bytes" >"$cg/memory.max"; echo 0 >"$cg/memory.swap.max" 2>/dev/null || true
  peak_file="$cg/memory.peak"
else                                                           # cgroup v1
  rel=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
  cg="/sys/fs/cgroup/memory${rel%/}/$name"; mkdir "$cg"
  echo "$bytes" >"$cg/memory.limit_in_bytes"
  peak_file="$cg/memory.max_usage_in_bytes"
fi
child=""
cleanup() {
  # the cgroup can only be removed once the command and everything it started have left it
  [ -z "$child" ] || while kill -0 "$child" 2>/dev/null; do wait "$child" || true; done
  rmdir "$cg" 2>/dev/null || true
}
trap cleanup EXIT
echo "memlimit: $limit for: $* (cgroup $cg)" >&2
# the child joins the cgroup before exec, so it and everything it starts are capped
bash -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' _ "$cg" "$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null || true' TERM INT
rc=0
wait "$child" || rc=$?
while kill -0 "$child" 2>/dev/null; do wait "$child" || rc=$?; done
if [ -r "$peak_file" ]; then
  echo "memlimit: peak $(numfmt --to=iec "$(cat "$peak_file")") of $limit [status=$rc]" >&2
fi
exit "$rc"
