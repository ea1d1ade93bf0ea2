#!/bin/sh
# Runs units of Redis 7.0.15's own Tcl test suite against svc kv, and against redis-server for
# comparison, each as an external server (`runtest --host --port`): the suite's tests that need a
# server of their own are skipped there, as are those tagged needs:debug and needs:repl.
#
#   test/kv/redis-tcl-suite.sh [unit ...]       e.g. unit/scripting unit/type/set (default: a set)
#
# Not part of `./svc test`: some units stop at their first failure or leave settings behind that
# fail the units after them (introspection sets maxmemory), a unit takes up to minutes, and the
# differences that remain are listed with their reasons in docs/kv.md ("Redis's own test suite").
# The suite comes from Debian's source of the redis-server package we test against, downloaded
# once into the cache and checked against its digest.
set -eu

ROOT=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd)
CACHE=${SVC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/svc}
VERSION=7.0.15
TARBALL_URL="http://deb.debian.org/debian/pool/main/r/redis/redis_${VERSION}.orig.tar.gz"
TARBALL_SHA256=4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982
SRC="$CACHE/redis-$VERSION-src"
OUT=${TMPDIR:-/tmp}/svc-redis-tcl-$$
# A unit that hangs (a reply it never gets) is stopped after this many seconds.
UNIT_TIMEOUT_SECONDS=900

if [ $# -eq 0 ]; then
  set -- unit/scripting unit/functions unit/multi unit/pubsub unit/tracking unit/introspection-2 \
    unit/type/stream-cgroups unit/type/set unit/type/list unit/type/incr unit/expire unit/bitops
fi

if [ ! -f "$SRC/runtest" ]; then
  mkdir -p "$CACHE"
  tarball="$CACHE/redis_$VERSION.orig.tar.gz"
  curl -fsS -o "$tarball.part" "$TARBALL_URL"
  echo "$TARBALL_SHA256  $tarball.part" | sha256sum -c --quiet
  mv "$tarball.part" "$tarball"
  rm -rf "$SRC.part" && mkdir -p "$SRC.part"
  tar -xzf "$tarball" -C "$SRC.part" --strip-components=1
  mv "$SRC.part" "$SRC"
fi

mkdir -p "$OUT/kv" "$OUT/redis"
port_of() { bun -e 'const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }); console.log(s.port); s.stop(true)'; }
KV_PORT=$(port_of)
REDIS_PORT=$(port_of)
bun "$ROOT/src/cli.ts" kv --port "$KV_PORT" --http-port 0 --dir "$OUT/kv" --enable-debug-command yes >"$OUT/kv.log" 2>&1 &
KV_PID=$!
redis-server --port "$REDIS_PORT" --save "" --appendonly no --dir "$OUT/redis" --enable-debug-command yes >"$OUT/redis.log" 2>&1 &
REDIS_PID=$!
trap 'kill $KV_PID $REDIS_PID 2>/dev/null || true' EXIT
for port in "$KV_PORT" "$REDIS_PORT"; do
  until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.2; done
done

printf '%-28s %12s %12s\n' unit "svc ok/err" "redis ok/err"
for unit in "$@"; do
  for server in kv redis; do
    port=$KV_PORT && [ "$server" = redis ] && port=$REDIS_PORT
    log="$OUT/$server-$(echo "$unit" | tr / _).txt"
    (cd "$SRC" && timeout "$UNIT_TIMEOUT_SECONDS" ./runtest --host 127.0.0.1 --port "$port" --single "$unit" \
      --tags -needs:debug --tags -needs:repl --clients 1 >"$log" 2>&1) || true
    eval "${server}_ok=\$(grep -c '\[ok\]\|32;49mok' \"\$log\" || true)"
    # Each failure is printed where it happens and again in the summary (after "***").
    eval "${server}_err=\$(grep -E '31;49m(err|exception)|\[(err|exception)\]' \"\$log\" | grep -cv '^\*\*\*' || true)"
  done
  # shellcheck disable=SC2154 # set by the eval above
  printf '%-28s %12s %12s\n' "$unit" "$kv_ok/$kv_err" "$redis_ok/$redis_err"
done
echo "logs: $OUT"
