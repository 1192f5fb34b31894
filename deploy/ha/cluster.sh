#!/usr/bin/env bash
# A PostgreSQL high-availability cluster on loopback, from Debian's packages: one etcd, three PostgreSQL nodes each
# run by Patroni (one leader, one synchronous standby, one more standby), and HAProxy in front, which routes every
# connection to the current leader. The server connects to HAProxy only.
#
#   cluster.sh install          apt-get install what is missing (patroni, etcd-server, haproxy, postgresql)
#   cluster.sh start            start everything, wait until the leader takes writes through HAProxy, print the URL
#   cluster.sh stop [--purge]   stop everything this script started (by pid); --purge also deletes the data
#   cluster.sh status           the nodes as Patroni sees them (leader, sync standby, lag)
#   cluster.sh url              the DATABASE_URL to give the server
#
# Everything lives in $HA_CLUSTER_DIR (default deploy/ha/.cluster, git-ignored). Ports (override with the
# variables): PostgreSQL $HA_PG_PORTS, Patroni REST $HA_REST_PORTS, etcd $HA_ETCD_PORTS (client, peer), HAProxy
# $HA_PROXY_PORT (the database address) and $HA_STATS_PORT (its stats page). PostgreSQL refuses to run as root:
# as root every process runs as the `postgres` user, otherwise as the calling user.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DIR=${HA_CLUSTER_DIR:-$HERE/.cluster}
read -r -a PG_PORTS <<<"${HA_PG_PORTS:-5441 5442 5443}"
read -r -a REST_PORTS <<<"${HA_REST_PORTS:-8011 8012 8013}"
read -r ETCD_CLIENT_PORT ETCD_PEER_PORT <<<"${HA_ETCD_PORTS:-2389 2390}"
PROXY_PORT=${HA_PROXY_PORT:-5450}
STATS_PORT=${HA_STATS_PORT:-5451}
NODES=(node1 node2 node3)
START_TIMEOUT_S=${HA_START_TIMEOUT_S:-120}

log() { printf 'ha: %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}

if [ "$(id -u)" -eq 0 ]; then RUN_AS=postgres; else RUN_AS=$(id -un); fi

pg_bin() {
  if [ -n "${PG_BIN:-}" ]; then
    echo "$PG_BIN"
    return
  fi
  local dir
  dir=$(find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -name initdb -path '*/bin/*' 2>/dev/null | sort -V | tail -1)
  [ -n "$dir" ] && dirname "$dir"
}

# The prefix that runs a command as the cluster's user; it execs, so a background job's $! is the command's pid.
as_cluster_user=(env)
if [ "$(id -u)" -eq 0 ]; then
  as_cluster_user=(setpriv --reuid="$RUN_AS" --regid="$(id -g "$RUN_AS")" --init-groups -- env HOME="$DIR")
fi

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# GET on loopback; prints the body and succeeds on a 200 (python3 comes with Patroni; curl may be absent).
http_get() {
  python3 - "$1" <<'PY'
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=2) as response:
        sys.stdout.write(response.read().decode())
except Exception:
    sys.exit(1)
PY
}

# Whether pid $1 is alive and its command line mentions $2 (so a recycled pid is never killed).
alive_as() {
  local pid=$1 name=$2
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$name"
}

pid_of() { cat "$DIR/run/$1.pid" 2>/dev/null || true; }

# Starts a long-running process in the background as the cluster's user, its output in log/<name>.log.
launch() {
  local name=$1
  shift
  "${as_cluster_user[@]}" HA_SECRETS="$DIR/secrets" PATH="$PATH" nohup "$@" >>"$DIR/log/$name.log" 2>&1 </dev/null &
  echo $! >"$DIR/run/$name.pid"
}

wait_for() {
  local what=$1 deadline=$((SECONDS + START_TIMEOUT_S))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "$what: not ready after ${START_TIMEOUT_S} s (logs in $DIR/log)"
    sleep 0.5
  done
}

secret() {
  local file="$DIR/secrets/$1.password"
  [ -s "$file" ] || (umask 077 && head -c 18 /dev/urandom | base64 | tr -d '/+=\n' >"$file")
  cat "$file"
}

database_url() { echo "postgresql://works:$(secret works)@127.0.0.1:$PROXY_PORT/works"; }

cmd_install() {
  local packages=()
  command -v patroni >/dev/null || packages+=(patroni)
  command -v etcd >/dev/null || packages+=(etcd-server)
  command -v haproxy >/dev/null || packages+=(haproxy)
  [ -n "$(pg_bin)" ] || packages+=(postgresql)
  command -v psql >/dev/null || packages+=(postgresql-client)
  command -v setpriv >/dev/null || packages+=(util-linux)
  if [ ${#packages[@]} -eq 0 ]; then
    log "installed: patroni $(patroni --version | cut -d' ' -f2), etcd $(etcd --version | head -1 | cut -d' ' -f3), haproxy $(haproxy -v | head -1 | cut -d' ' -f3), PostgreSQL in $(pg_bin)"
    return
  fi
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  log "installing ${packages[*]} (apt-get)"
  # Debian starts a package's service on install (etcd on 2379, haproxy, PostgreSQL on 5432): this cluster uses none
  # of them, so none is started, unless the machine already has a policy of its own.
  local policy=/usr/sbin/policy-rc.d made_policy=
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 755 "$policy"
    made_policy=1
  fi
  local status=0
  "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
    --no-install-recommends "${packages[@]}" >&2 || status=$?
  [ -z "$made_policy" ] || "${sudo[@]}" rm -f "$policy"
  return $status
}

render_node() {
  local index=$1 name=${NODES[$1]} node_dir="$DIR/${NODES[$1]}"
  mkdir -p "$node_dir"
  sed -e "s|@NAME@|$name|g" \
    -e "s|@REST_PORT@|${REST_PORTS[$index]}|g" \
    -e "s|@PG_PORT@|${PG_PORTS[$index]}|g" \
    -e "s|@ETCD_HOSTS@|127.0.0.1:$ETCD_CLIENT_PORT|g" \
    -e "s|@NODE_DIR@|$node_dir|g" \
    -e "s|@HERE@|$HERE|g" \
    -e "s|@PG_BIN@|$(pg_bin)|g" \
    -e "s|@SUPERUSER_PASSWORD@|$(secret postgres)|g" \
    -e "s|@REPLICATION_PASSWORD@|$(secret replicator)|g" \
    -e "s|@REWIND_PASSWORD@|$(secret rewinder)|g" \
    "$HERE/patroni.yml" >"$node_dir/patroni.yml"
  chmod 600 "$node_dir/patroni.yml"
  chmod 700 "$node_dir"
}

render_haproxy() {
  local servers="" index
  for index in "${!NODES[@]}"; do
    servers+="    server ${NODES[$index]} 127.0.0.1:${PG_PORTS[$index]} check port ${REST_PORTS[$index]}"$'\n'
  done
  awk -v servers="$servers" '{ if ($0 == "@SERVERS@") printf "%s", servers; else print }' "$HERE/haproxy.cfg" |
    sed -e "s|@PROXY_PORT@|$PROXY_PORT|g" -e "s|@STATS_PORT@|$STATS_PORT|g" >"$DIR/haproxy.cfg"
}

# The members as the leader's Patroni API lists them (JSON), from whichever node answers.
cluster_json() {
  local port
  for port in "${REST_PORTS[@]}"; do
    http_get "http://127.0.0.1:$port/cluster" && return 0
  done
  return 1
}

# Ready: a leader, a synchronous standby, every node running, and a write through HAProxy.
members_ready() {
  cluster_json | python3 -c '
import json, sys
members = json.load(sys.stdin)["members"]
roles = [m["role"] for m in members]
ok = len(members) == int(sys.argv[1]) and "leader" in roles and "sync_standby" in roles \
     and all(m["state"] in ("running", "streaming") for m in members)
sys.exit(0 if ok else 1)' "${#NODES[@]}"
}

writes_through_proxy() {
  psql "$(database_url)" -v ON_ERROR_STOP=1 -qAtc "CREATE TEMP TABLE ready (x int); SELECT 1" >/dev/null
}

cmd_start() {
  local name pid
  [ -n "$(pg_bin)" ] || die "no PostgreSQL server binaries: run '$0 install' (or set PG_BIN)"
  for name in patroni etcd haproxy psql setpriv python3; do
    command -v "$name" >/dev/null || die "$name is missing: run '$0 install'"
  done
  for name in etcd haproxy "${NODES[@]}"; do
    pid=$(pid_of "$name")
    if alive_as "$pid" "${name/node*/patroni}"; then die "already running ($name, pid $pid): '$0 stop' first"; fi
  done
  local port
  for port in "${PG_PORTS[@]}" "${REST_PORTS[@]}" "$ETCD_CLIENT_PORT" "$ETCD_PEER_PORT" "$PROXY_PORT" "$STATS_PORT"; do
    if port_in_use "$port"; then die "port $port is taken: set the HA_*_PORT(S) variables (see $0)"; fi
  done

  mkdir -p "$DIR/run" "$DIR/log" "$DIR/secrets"
  for name in postgres replicator rewinder works; do secret "$name" >/dev/null; done
  for index in "${!NODES[@]}"; do render_node "$index"; done
  render_haproxy
  [ "$(id -u)" -ne 0 ] || chown -R "$RUN_AS:" "$DIR"

  log "etcd on 127.0.0.1:$ETCD_CLIENT_PORT"
  launch etcd etcd --name etcd1 --data-dir "$DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "etcd1=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new \
    --logger zap --log-level warn
  wait_for "etcd" http_get "http://127.0.0.1:$ETCD_CLIENT_PORT/health"

  # The first node initialises the cluster; the others then clone it with pg_basebackup and follow.
  log "PostgreSQL ${NODES[0]} on 127.0.0.1:${PG_PORTS[0]} (Patroni REST ${REST_PORTS[0]})"
  launch "${NODES[0]}" patroni "$DIR/${NODES[0]}/patroni.yml"
  wait_for "${NODES[0]} as leader" http_get "http://127.0.0.1:${REST_PORTS[0]}/primary"
  for index in "${!NODES[@]}"; do
    ((index > 0)) || continue
    log "PostgreSQL ${NODES[$index]} on 127.0.0.1:${PG_PORTS[$index]} (Patroni REST ${REST_PORTS[$index]})"
    launch "${NODES[$index]}" patroni "$DIR/${NODES[$index]}/patroni.yml"
  done
  wait_for "a leader with a synchronous standby" members_ready

  log "HAProxy on 127.0.0.1:$PROXY_PORT (stats http://127.0.0.1:$STATS_PORT/)"
  launch haproxy haproxy -db -f "$DIR/haproxy.cfg"
  wait_for "writes through HAProxy" writes_through_proxy
  cmd_status
  echo "DATABASE_URL=$(database_url)"
}

# Stops one process by its pid file: SIGTERM, then SIGKILL after `grace` seconds.
stop_process() {
  local name=$1 match=$2 grace=$3 pid
  pid=$(pid_of "$name")
  if alive_as "$pid" "$match"; then
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + grace))
    while alive_as "$pid" "$match" && ((SECONDS < deadline)); do sleep 0.2; done
    if alive_as "$pid" "$match"; then
      log "$name (pid $pid) did not stop in ${grace} s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$DIR/run/$name.pid"
}

cmd_stop() {
  [ -d "$DIR" ] || return 0
  local name leader="" postmaster
  leader=$(cluster_json 2>/dev/null | python3 -c '
import json, sys
print(next((m["name"] for m in json.load(sys.stdin)["members"] if m["role"] == "leader"), ""))' 2>/dev/null || true)
  stop_process haproxy haproxy 10
  # Standbys first, the leader last: nothing fails over while the cluster stops. Patroni stops its PostgreSQL.
  for name in "${NODES[@]}"; do [ "$name" = "$leader" ] || stop_process "$name" patroni 60; done
  [ -z "$leader" ] || stop_process "$leader" patroni 60
  # A PostgreSQL whose Patroni was killed outlives it: a fast shutdown (SIGINT), by the pid in its data folder.
  for name in "${NODES[@]}"; do
    postmaster=$(head -1 "$DIR/$name/data/postmaster.pid" 2>/dev/null || true)
    if alive_as "$postmaster" postgres; then
      kill -INT "$postmaster" 2>/dev/null || true
      local deadline=$((SECONDS + 30))
      while alive_as "$postmaster" postgres && ((SECONDS < deadline)); do sleep 0.2; done
      ! alive_as "$postmaster" postgres || kill -KILL "$postmaster" 2>/dev/null || true
    fi
  done
  stop_process etcd etcd 10
  if [ "${1:-}" = "--purge" ]; then
    rm -rf "$DIR"
    log "stopped; data deleted"
  else
    log "stopped; data kept in $DIR ('$0 start' resumes it, 'stop --purge' deletes it)"
  fi
}

cmd_status() {
  cluster_json | python3 -c '
import json, sys
for m in json.load(sys.stdin)["members"]:
    where = "127.0.0.1:%s" % m["port"]
    print("ha: %-6s %-13s %-9s %s  timeline %s  lag %s" % (m["name"], m["role"], m["state"], where,
          m.get("timeline", "-"), m.get("lag", "-")))
' >&2 || die "no Patroni node answers"
}

case "${1:-}" in
  install) cmd_install ;;
  start) cmd_start ;;
  stop) cmd_stop "${2:-}" ;;
  status) cmd_status ;;
  url) database_url ;;
  *) die "usage: $0 install | start | stop [--purge] | status | url" ;;
esac
