#!/usr/bin/env bash
# Stop the SLURM started by ci/slurm/start.sh STATE_DIR: cancel its jobs, then end slurmd, slurmctld and
# munged by the PIDs in their PID files (only processes whose name matches; never by name alone).
#
#   ci/slurm/stop.sh STATE_DIR [--remove]     # --remove also deletes STATE_DIR
set -uo pipefail

[ $# -ge 1 ] || { echo "usage: $0 STATE_DIR [--remove]" >&2; exit 2; }
STATE=$(realpath -m "$1")
rc=0

if [ -f "$STATE"/slurm.conf ] && [ -f "$STATE"/slurmctld.pid ]; then
  export SLURM_CONF="$STATE"/slurm.conf
  ids=$(timeout 10 squeue -h -t PENDING,RUNNING,SUSPENDED -o %i 2>/dev/null || true)
  if [ -n "$ids" ]; then
    echo "ci/slurm/stop.sh: cancelling jobs still queued or running:" $ids >&2
    # shellcheck disable=SC2086
    timeout 10 scancel $ids 2>/dev/null
    for _ in $(seq 30); do  # let slurmd end the jobs' processes (KillWait=1) before slurmd itself goes
      [ -z "$(timeout 10 squeue -h -t RUNNING,COMPLETING,SUSPENDED -o %i 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
fi

stop_pid() {  # stop_pid PIDFILE NAME
  local pidfile=$1 name=$2 pid comm
  [ -f "$pidfile" ] || return 0
  pid=$(tr -dc 0-9 <"$pidfile")
  [ -n "$pid" ] || return 0
  comm=$(cat /proc/"$pid"/comm 2>/dev/null || true)
  case "$comm" in
    "$name"*) ;;
    *) return 0 ;;  # already gone (or the PID was reused by something else: leave it alone)
  esac
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 40); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.25
  done
  echo "ci/slurm/stop.sh: $name (PID $pid) ignored SIGTERM for 10 s; sending SIGKILL" >&2
  kill -KILL "$pid" 2>/dev/null
  sleep 0.5
  if kill -0 "$pid" 2>/dev/null; then
    echo "ci/slurm/stop.sh: $name (PID $pid) still running" >&2
    rc=1
  fi
}

stop_pid "$STATE"/slurmd.pid slurmd
stop_pid "$STATE"/slurmctld.pid slurmctld
stop_pid "$STATE"/munge/munged.pid munged

# the /etc/slurm/slurm.conf link made by start.sh, if it points into STATE_DIR
if [ -L /etc/slurm/slurm.conf ] && [ "$(readlink /etc/slurm/slurm.conf)" = "$STATE"/slurm.conf ]; then
  rm -f /etc/slurm/slurm.conf
fi

if [ "${2:-}" = --remove ] && [ "$rc" -eq 0 ]; then
  rm -rf "$STATE"
fi
exit "$rc"
