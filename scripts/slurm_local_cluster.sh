#!/usr/bin/env bash
# Starts a one-node Slurm cluster on localhost (munged, slurmctld, slurmd) with its state, logs and
# slurm.conf under the folder given as $1, for scripts/ci_slurm.sh. Needs root and Debian's
# slurm-wlm and munge. Prints the `export SLURM_CONF=…` line the client commands need; stop it
# with `scripts/slurm_local_cluster.sh stop DIR`.
set -euo pipefail

if [ "${1:-}" = stop ]; then
  dir=$2
  pids=()
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [ -f "$pidfile" ] && pids+=("$(cat "$pidfile")")
  done
  [ "${#pids[@]}" -gt 0 ] && kill "${pids[@]}" 2>/dev/null || true
  # The daemons write their state on the way out: wait (at most 20 s) so the folder can go.
  for _ in $(seq 40); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.5
  done
  exit 0
fi

dir=$(realpath "$1")
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
host=$(hostname -s)
cpus=$(nproc)
mem_mb=$(($(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo) / 1024 - 512))

# munge: the package's key, a private socket so that a system munged (if any) is left alone.
chown munge:munge "$dir/munge"
runuser -u munge -- /usr/sbin/munged --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed"
cat > "$dir/slurm.conf" <<CONF
ClusterName=roboaudit-ci
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf
/usr/sbin/slurmctld -f "$SLURM_CONF"
/usr/sbin/slurmd -f "$SLURM_CONF"
for _ in $(seq 60); do
  if sinfo -h -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 1
done
echo "slurm did not come up within 60 s; logs:" >&2
tail -n 20 "$dir"/*.log >&2
exit 1
