#!/usr/bin/env bash
# Start a private single-node SLURM (munged, slurmctld, slurmd) on this machine, for tests/workflow/test_slurm_faults.py.
#
#   ci/slurm/start.sh STATE_DIR     # then: export SLURM_CONF=STATE_DIR/slurm.conf; ...; ci/slurm/stop.sh STATE_DIR
#
# Needs root and the Debian packages `slurmctld slurmd slurm-client munge` (SLURM 22.05). No systemd: the
# daemons are started directly and write their PIDs under STATE_DIR, which ci/slurm/stop.sh reads. Everything
# lives in STATE_DIR (own munge key and socket, slurm.conf, spool, logs) except one symlink,
# /etc/slurm/slurm.conf -> STATE_DIR/slurm.conf: the SLURM jobstep executor clears SLURM_CONF before its
# inner `srun`, so the config must be at the default path. A slurm.conf already there that is not such a
# link is never touched: the script stops with an error instead.
# Ports: BANDITREPRO_SLURM_PORT (slurmctld, default 6817) and the next one (slurmd). Job slots:
# BANDITREPRO_SLURM_SLOTS (default 16, never fewer than the CPUs): more than the cores, see slurm.conf.in.
# Exits non-zero, printing the daemons' logs, if the cluster does not come up and run a job.
set -euo pipefail

die() {
  echo "ci/slurm/start.sh: $*" >&2
  for f in "$STATE"/munge/munged.log "$STATE"/slurmctld.log "$STATE"/slurmd.log; do
    [ -f "$f" ] && { echo "---- $f (last 30 lines)" >&2; tail -n 30 "$f" >&2; }
  done
  exit 1
}

[ $# -eq 1 ] || { echo "usage: $0 STATE_DIR" >&2; exit 2; }
STATE=$(realpath -m "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" -eq 0 ] || die "must run as root (slurmd starts jobs as their user)"
for b in munged munge unmunge slurmctld slurmd sinfo sbatch squeue srun scontrol runuser; do
  command -v "$b" >/dev/null || die "'$b' not found: apt-get install slurmctld slurmd slurm-client munge"
done
id munge >/dev/null 2>&1 || die "no 'munge' user (is the munge package installed?)"
[ ${#STATE} -le 80 ] || die "STATE_DIR path too long for a unix socket: $STATE"

CTLD_PORT=${BANDITREPRO_SLURM_PORT:-6817}
SLURMD_PORT=$((CTLD_PORT + 1))
PARTITION=${BANDITREPRO_SLURM_PARTITION:-debug}
if command -v ss >/dev/null && ss -ltn | awk '{print $4}' | grep -Eq ":($CTLD_PORT|$SLURMD_PORT)\$"; then
  die "port $CTLD_PORT or $SLURMD_PORT already in use (another slurmctld/slurmd?); set BANDITREPRO_SLURM_PORT"
fi

ETC=/etc/slurm/slurm.conf
if [ -L "$ETC" ]; then  # a link left by an earlier run of this script (dangling, or to a CI config): replace it
  target=$(readlink "$ETC")
  if [ ! -e "$target" ] || grep -q '^ClusterName=banditrepro-ci$' "$target"; then rm -f "$ETC"; fi
fi
if [ -e "$ETC" ] || [ -L "$ETC" ]; then
  die "$ETC exists and was not made by this script: not touching a real SLURM configuration"
fi
mkdir -p /etc/slurm
ln -s "$STATE"/slurm.conf "$ETC"  # written below

mkdir -p "$STATE"/ctld "$STATE"/spool "$STATE"/munge
chmod 0755 "$STATE"  # munged (user munge) must reach its socket directory
chown munge:munge "$STATE"/munge
chmod 0755 "$STATE"/munge

# ---- munge: a fresh key and socket of our own
if [ ! -s "$STATE"/munge/munge.key ]; then
  dd if=/dev/urandom of="$STATE"/munge/munge.key bs=1024 count=1 status=none
  chown munge:munge "$STATE"/munge/munge.key
  chmod 0400 "$STATE"/munge/munge.key
fi
SOCK="$STATE"/munge/munge.socket.2
runuser -u munge -- munged --socket="$SOCK" --key-file="$STATE"/munge/munge.key \
  --pid-file="$STATE"/munge/munged.pid --log-file="$STATE"/munge/munged.log \
  --seed-file="$STATE"/munge/munged.seed </dev/null >/dev/null 2>&1 || die "munged did not start"
munge -S "$SOCK" -n | unmunge -S "$SOCK" >/dev/null || die "munge round trip failed"

# ---- slurm.conf: this machine's CPUs and ~90 % of its memory
read -r CPUS MEM < <(slurmd -C | awk '{for (i = 1; i <= NF; i++) {split($i, kv, "=");
  if (kv[1] == "CPUs") c = kv[2]; if (kv[1] == "RealMemory") m = kv[2]}} END {print c, m}')
[ -n "$CPUS" ] && [ -n "$MEM" ] || die "could not read CPUs/RealMemory from 'slurmd -C'"
MEM=$((MEM * 9 / 10))
SLOTS=${BANDITREPRO_SLURM_SLOTS:-16}
[ "$SLOTS" -ge "$CPUS" ] || SLOTS=$CPUS
sed -e "s|@STATE@|$STATE|g" -e "s|@SLOTS@|$SLOTS|g" -e "s|@MEMORY@|$MEM|g" -e "s|@PARTITION@|$PARTITION|g" \
  -e "s|@CTLD_PORT@|$CTLD_PORT|g" -e "s|@SLURMD_PORT@|$SLURMD_PORT|g" "$HERE"/slurm.conf.in >"$STATE"/slurm.conf
export SLURM_CONF="$STATE"/slurm.conf

# ---- daemons (they fork into the background and write their PID files)
slurmctld -f "$SLURM_CONF" </dev/null >>"$STATE"/slurmctld.out 2>&1 || die "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N localhost </dev/null >>"$STATE"/slurmd.out 2>&1 || die "slurmd did not start"

state=""
for _ in $(seq 60); do
  state=$(sinfo -h -N -n localhost -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || die "node 'localhost' not idle after 30 s (state: '${state:-none}')"

# ---- smoke test: one job through the scheduler
out=$(timeout 60 srun -N1 -n1 -t 1 --mem 10 hostname 2>&1) || die "srun smoke job failed: $out"
echo "ci/slurm/start.sh: SLURM up (CPUs=$CPUS slots=$SLOTS RealMemory=$MEM partition=$PARTITION); export SLURM_CONF=$SLURM_CONF"
