#!/usr/bin/env bash
# A real Slurm cluster on this one machine (Debian 12's slurm-wlm 22.05 and munge, as root, no
# systemd, no cgroups): a private munged, slurmctld, and two slurmd named node0 and node1 (one
# CPU each), everything under one directory. Tests and docs/BATCH.md use it.
#   local_slurm.sh start DIR     starts it (DIR is created); prints `export SLURM_CONF=DIR/etc/slurm.conf`
#   local_slurm.sh stop DIR      cancels its jobs and stops every daemon it started
# FEATURES (default "tilebank") is each node's feature list, for --constraint, and NODE1_FEATURES
# node1's when it differs (two "soc_versions" on one machine); PORT_BASE (default 16817) the
# controller's port, the nodes' are the next two.
set -euo pipefail

die() { echo "local_slurm.sh: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null || die "$1 is missing: run scripts/setup.sh --cluster (apt-get install slurm-wlm munge)"; }

start() {
  local base=$1
  for tool in munged mungekey munge unmunge slurmctld slurmd sinfo scontrol; do need "$tool"; done
  [ "$(id -u)" -eq 0 ] || die "run it as root (slurmd starts jobs as their users)"
  mkdir -p "$base"/{etc,munge,state,spool/node0,spool/node1,log,run}
  base=$(cd "$base" && pwd)
  # munged checks that every directory up to its socket can be entered, and that its key is private.
  chmod 0755 "$base" "$base/munge" "$base/etc" "$base/log" "$base/run"
  chmod 0700 "$base/state"
  local socket=$base/munge/munge.socket port=${PORT_BASE:-16817}
  [ ${#socket} -lt 100 ] || die "$base is too long a path for a Unix socket"
  [ -f "$base/munge/munge.key" ] || mungekey --create --keyfile="$base/munge/munge.key"
  chmod 0600 "$base/munge/munge.key"
  munged --socket="$socket" --key-file="$base/munge/munge.key" --pid-file="$base/munge/munged.pid" \
    --log-file="$base/log/munged.log" --seed-file="$base/munge/munged.seed" ||
    die "munged did not start: $(tail -3 "$base/log/munged.log" 2>/dev/null)"
  munge -n -S "$socket" | unmunge -S "$socket" >/dev/null || die "munge cannot encode and decode a credential"

  # cred_expire=30 and the 5 s scheduler intervals make a requeued job start again within about
  # 35 s (Slurm holds it for cred_expire + 1 s); CR_CPU: jobs need no --mem.
  cat >"$base/etc/slurm.conf" <<EOF
ClusterName=tilebank-local
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket,cred_expire=30
StateSaveLocation=$base/state
SlurmdSpoolDir=$base/spool/%n
SlurmctldPidFile=$base/run/slurmctld.pid
SlurmdPidFile=$base/run/slurmd-%n.pid
SlurmctldLogFile=$base/log/slurmctld.log
SlurmdLogFile=$base/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=5,bf_interval=5
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobRequeue=1
MinJobAge=300
NodeName=node0 NodeAddr=127.0.0.1 Port=$((port + 1)) CPUs=1 RealMemory=1000 Features=${FEATURES:-tilebank} State=UNKNOWN
NodeName=node1 NodeAddr=127.0.0.1 Port=$((port + 2)) CPUs=1 RealMemory=1000 Features=${NODE1_FEATURES:-${FEATURES:-tilebank}} State=UNKNOWN
PartitionName=local Nodes=node0,node1 Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$base/etc/slurm.conf
  slurmctld -f "$SLURM_CONF" || die "slurmctld did not start: $(tail -5 "$base/log/slurmctld.log" 2>/dev/null)"
  for node in node0 node1; do
    slurmd -f "$SLURM_CONF" -N "$node" || die "slurmd $node did not start: $(tail -5 "$base/log/slurmd-$node.log" 2>/dev/null)"
  done
  local states=""
  for _ in $(seq 1 60); do
    states=$(sinfo -h -N -o '%t' 2>/dev/null | sort -u | tr '\n' ' ' || true)  # sinfo fails until slurmctld listens
    [ "$states" = "idle " ] && break
    sleep 1
  done
  [ "$states" = "idle " ] || die "the nodes are not idle after 60 s (states: ${states:-none}): $(tail -5 "$base/log/slurmctld.log")"
  echo "export SLURM_CONF=$SLURM_CONF"
}

stop() {
  local base=$1
  [ -f "$base/etc/slurm.conf" ] || die "$base holds no cluster this script started"
  export SLURM_CONF=$base/etc/slurm.conf
  local jobs
  jobs=$(squeue -h -o %A 2>/dev/null || true)
  [ -z "$jobs" ] || scancel --quiet $jobs 2>/dev/null || true
  for pidfile in "$base"/run/slurmd-*.pid "$base/run/slurmctld.pid" "$base/munge/munged.pid"; do
    [ -f "$pidfile" ] && kill -TERM "$(cat "$pidfile")" 2>/dev/null || true
  done
  for _ in $(seq 1 30); do
    local alive=0
    for pidfile in "$base"/run/slurmd-*.pid "$base/run/slurmctld.pid" "$base/munge/munged.pid"; do
      [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null && alive=1
    done
    if [ $alive = 0 ]; then
      rm -f "$base"/run/*.pid "$base/munge/munged.pid"  # a stale pid file must not name a later process
      return 0
    fi
    sleep 1
  done
  die "daemons of $base still run after 30 s"
}

case "${1:-}" in
  start) [ $# -eq 2 ] || die "usage: local_slurm.sh start DIR"; start "$2" ;;
  stop) [ $# -eq 2 ] || die "usage: local_slurm.sh stop DIR"; stop "$2" ;;
  *) echo "usage: local_slurm.sh start DIR | stop DIR" >&2; exit 2 ;;
esac
