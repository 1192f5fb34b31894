#!/usr/bin/env bash
# A PostgreSQL high-availability cluster on loopback, from Debian's packages: one etcd, three PostgreSQL nodes each
# run by Patroni (one leader, one synchronous standby, one more standby), and HAProxy in front, which routes every
# connection to the current leader. The server connects to HAProxy only.
#
#   cluster.sh install            apt-get install what is missing (patroni, etcd-server, haproxy, postgresql)
#   cluster.sh start              start everything, wait until the leader takes writes through HAProxy, print the URL
#   cluster.sh start-node <name>  start one node's Patroni again (after its machine was lost: node1, node2, node3)
#   cluster.sh stop [--purge]     stop everything this script started (by pid); --purge also deletes the data
#   cluster.sh status             the nodes as Patroni sees them (leader, sync standby, lag)
#   cluster.sh url                the DATABASE_URL to give the server
#
# Every door is locked (docs/production.md, "High availability"): PostgreSQL asks every connection for a SCRAM
# password (local sockets too); etcd takes TLS connections with a client certificate only, and each certificate's
# user may do only its part (etcd-auth.py); Patroni's REST API asks for a password on every request that changes
# something; HAProxy's stats page asks for one. The secrets are random, made once, in $DIR/secrets (mode 0700, files
# 0600), and no password is ever on a command line (/proc/*/cmdline is readable by every local user).
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

# Whether node $1's Patroni is running (by its pid file).
node_alive() { alive_as "$(pid_of "$1")" patroni; }

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

# Where Patroni keeps the cluster in etcd (its namespace and scope, read from patroni.yml): the leader key's value is
# the leading node's name.
leader_key() {
  local namespace scope
  namespace=$(sed -n "s/^namespace: *'\{0,1\}\([^']*\)'\{0,1\}$/\1/p" "$HERE/patroni.yml")
  scope=$(sed -n "s/^scope: *'\{0,1\}\([^']*\)'\{0,1\}$/\1/p" "$HERE/patroni.yml")
  echo "/${namespace#/}${scope}/leader" | sed 's|//*|/|g'
}

# Certificates for etcd, from a CA of the cluster's own (ECDSA P-256, ten years; keys 0600 in secrets/tls): etcd's
# server certificate, and one client certificate per etcd user (its common name is the user): patroni, haproxy, root.
# etcd accepts no connection without one (etcd-auth.py says who may do what). Made once; kept across restarts.
make_tls() {
  local tls="$DIR/secrets/tls" name
  [ -s "$tls/root.crt" ] && return 0
  (
    umask 077
    mkdir -p "$tls"
    cd "$tls"
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ca.key 2>/dev/null
    openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=works-api HA loopback CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out ca.crt
    for name in etcd patroni haproxy root; do
      openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$name.key" 2>/dev/null
      openssl req -new -key "$name.key" -subj "/CN=$name" -out "$name.csr"
      # etcd's gateway also dials etcd itself with the server certificate: it needs clientAuth too.
      if [ "$name" = etcd ]; then
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' >"$name.ext"
      else
        printf 'extendedKeyUsage=clientAuth\n' >"$name.ext"
      fi
      openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
        -extfile "$name.ext" -out "$name.crt" 2>/dev/null
      rm -f "$name.csr" "$name.ext"
    done
    cat haproxy.crt haproxy.key >haproxy.pem
  )
}

# etcd-auth.py health|setup, with Patroni's namespace and the leader key.
etcd_auth() {
  local namespace
  namespace=$(dirname "$(dirname "$(leader_key)")")
  python3 "$HERE/etcd-auth.py" "$1" "https://127.0.0.1:$ETCD_CLIENT_PORT" "$DIR/secrets" "${namespace%/}/" "$(leader_key)"
}

cmd_install() {
  local packages=()
  command -v patroni >/dev/null || packages+=(patroni)
  command -v etcd >/dev/null || packages+=(etcd-server)
  command -v haproxy >/dev/null || packages+=(haproxy)
  [ -n "$(pg_bin)" ] || packages+=(postgresql)
  command -v psql >/dev/null || packages+=(postgresql-client)
  command -v setpriv >/dev/null || packages+=(util-linux)
  command -v openssl >/dev/null || packages+=(openssl)
  # Patroni's HTTPS client (urllib3) needs idna, which Debian's patroni package does not pull in.
  /usr/bin/python3 -c 'import idna' 2>/dev/null || packages+=(python3-idna)
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
    -e "s|@REST_PASSWORD@|$(secret patroni-rest)|g" \
    -e "s|@TLS_DIR@|$DIR/secrets/tls|g" \
    "$HERE/patroni.yml" >"$node_dir/patroni.yml"
  chmod 600 "$node_dir/patroni.yml"
  chmod 700 "$node_dir"
}

# haproxy.cfg's @SERVERS@ becomes one tracking server per node, @FENCES@ one checking backend per node (see there).
render_haproxy() {
  local servers="" fences="" index name tls="$DIR/secrets/tls"
  for index in "${!NODES[@]}"; do
    name=${NODES[$index]}
    servers+="    server $name 127.0.0.1:${PG_PORTS[$index]} track fence_$name/$name"$'\n'
    fences+="backend fence_$name"$'\n'
    fences+="    http-check connect port ${REST_PORTS[$index]}"$'\n'
    fences+="    http-check send meth OPTIONS uri /primary"$'\n'
    fences+="    http-check expect status 200"$'\n'
    fences+="    http-check connect port $ETCD_CLIENT_PORT ssl"$'\n'
    fences+="    http-check send meth GET uri /v2/keys$(leader_key)?quorum=true"$'\n'
    fences+="    http-check expect string '\"value\":\"$name\"'"$'\n'
    fences+="    server $name 127.0.0.1:${PG_PORTS[$index]} check crt $tls/haproxy.pem ca-file $tls/ca.crt verify required"$'\n\n'
  done
  awk -v servers="$servers" -v fences="$fences" '{
      if ($0 == "@SERVERS@") printf "%s", servers; else if ($0 == "@FENCES@") printf "%s", fences; else print
    }' "$HERE/haproxy.cfg" |
    sed -e "s|@PROXY_PORT@|$PROXY_PORT|g" -e "s|@STATS_PORT@|$STATS_PORT|g" \
      -e "s|@STATS_PASSWORD@|$(secret haproxy-stats)|g" >"$DIR/haproxy.cfg"
  chmod 600 "$DIR/haproxy.cfg"
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

# psql finds the password in a passfile (0600, written by cmd_start): on its command line every local user could
# read it.
writes_through_proxy() {
  PGPASSFILE="$DIR/secrets/works.pgpass" psql "postgresql://works@127.0.0.1:$PROXY_PORT/works" -v ON_ERROR_STOP=1 \
    -qAtc "CREATE TEMP TABLE ready (x int); SELECT 1" >/dev/null
}

cmd_start() {
  local name pid
  [ -n "$(pg_bin)" ] || die "no PostgreSQL server binaries: run '$0 install' (or set PG_BIN)"
  for name in patroni etcd haproxy psql setpriv python3 openssl; do
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
  chmod 700 "$DIR" "$DIR/secrets"
  for name in postgres replicator rewinder works patroni-rest haproxy-stats; do
    secret "$name" >/dev/null
  done
  (umask 077 && echo "127.0.0.1:$PROXY_PORT:works:works:$(secret works)" >"$DIR/secrets/works.pgpass")
  make_tls
  for index in "${!NODES[@]}"; do render_node "$index"; done
  render_haproxy
  [ "$(id -u)" -ne 0 ] || chown -R "$RUN_AS:" "$DIR"

  # --enable-v2: Patroni's `etcd:` (v2) store, whose leader update is a compare-and-swap on the leader's own name
  # (patroni.yml says why). TLS with client certificates on the client port; the peer port (a single member here)
  # listens on loopback only.
  local tls="$DIR/secrets/tls"
  log "etcd on 127.0.0.1:$ETCD_CLIENT_PORT (TLS, client certificates)"
  launch etcd etcd --name etcd1 --data-dir "$DIR/etcd" --enable-v2 \
    --listen-client-urls "https://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "https://127.0.0.1:$ETCD_CLIENT_PORT" \
    --cert-file "$tls/etcd.crt" --key-file "$tls/etcd.key" --client-cert-auth --trusted-ca-file "$tls/ca.crt" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "etcd1=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-state new \
    --logger zap --log-level warn
  wait_for "etcd" etcd_auth health
  etcd_auth setup || die "etcd: setting up authentication failed (logs in $DIR/log)"

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

  log "HAProxy on 127.0.0.1:$PROXY_PORT (stats http://127.0.0.1:$STATS_PORT/, user stats, password in $DIR/secrets)"
  launch haproxy haproxy -db -f "$DIR/haproxy.cfg"
  wait_for "writes through HAProxy" writes_through_proxy
  cmd_status
  echo "DATABASE_URL=$(database_url)"
}

# After the loss of a node's machine (its Patroni and PostgreSQL killed): Patroni starts it again, as a standby of
# the current leader (rewound if it had diverged).
cmd_start_node() {
  local name=${1:-} index found=
  for index in "${!NODES[@]}"; do [ "${NODES[$index]}" != "$name" ] || found=$index; done
  [ -n "$found" ] || die "start-node: which node? (${NODES[*]})"
  [ -f "$DIR/$name/patroni.yml" ] || die "start-node: $name was never started ('$0 start' first)"
  if node_alive "$name"; then die "start-node: $name is running (pid $(pid_of "$name"))"; fi
  log "PostgreSQL $name on 127.0.0.1:${PG_PORTS[$found]} (Patroni REST ${REST_PORTS[$found]})"
  launch "$name" patroni "$DIR/$name/patroni.yml"
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
  start-node) cmd_start_node "${2:-}" ;;
  stop) cmd_stop "${2:-}" ;;
  status) cmd_status ;;
  url) database_url ;;
  *) die "usage: $0 install | start | start-node <name> | stop [--purge] | status | url" ;;
esac
