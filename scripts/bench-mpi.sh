#!/usr/bin/env bash
# Data-parallel training: time per update of the benchmark models (configs/gru-bahdanau.json,
# configs/transformer.json on data/train.*), all with the same global batch (2 batches of 2,000
# padded tokens per update), in the chosen settings run in turn, R times each:
#
#   one        1 process x 1 thread, training.accumulate=2
#   ranks      mpirun -np 2, 1 thread each (shared-memory transport), gradients summed during backward
#   pair       no MPI: two independent processes at once, 1 thread and 1 batch per update each, so
#              one/pair is the most any 2-rank run can reach on this machine (cores that slow each
#              other down: shared caches, memory bandwidth, the host's scheduling)
#   threads    1 process x 2 threads, training.accumulate=2
#   tcp        as ranks, over TCP (--mca btl tcp,self): the network path
#   blocking   as ranks, training.reduce_overlap=false: every all-reduce after backward
#   nodes-1g   two simulated machines: one rank in each of two network namespaces joined by a
#   nodes-10g  veth pair whose both ends tc limits to 1 or 10 Gbit/s (tbf), launched through
#              Open MPI's rsh agent (a wrapper that runs `ip netns exec`), TCP between them.
#              This kernel may lack netem, so no added delay: the veth's own is microseconds.
#   nodes-1g-blocking, nodes-10g-blocking   the same with training.reduce_overlap=false
#
#   scripts/bench-mpi.sh [--steps N] [--repeats R] [--arch gru-bahdanau|transformer|both]
#                        [--settings one,ranks,threads,tcp,blocking,nodes-1g,...]
#
# Defaults: 60 steps, 3 repeats, both models, settings one,ranks,threads,tcp,blocking. Prints
# per setting the median seconds per update (updates 11..N, after warm-up), the ratio of `one` to
# each other setting (one/ranks: scaling over 2 processes, target >= 1.85), the megabytes
# all-reduced per update and the time per update ranks wait after backward: the least-waiting
# rank's wait is the all-reduce that backward did not hide, the most-waiting rank's adds the time
# it waited for slower ranks. Run it on an otherwise idle machine with 2 free cores.
# Environment: HEED (default build/heed). Needs mpirun (Debian: openmpi-bin).
set -euo pipefail
cd "$(dirname "$0")/.."

steps=60 repeats=3 arch=both settings=one,ranks,threads,tcp,blocking
usage="usage: scripts/bench-mpi.sh [--steps N] [--repeats R] [--arch gru-bahdanau|transformer|both] [--settings LIST]"
while [[ $# -gt 0 ]]; do
  case $1 in
    --steps) steps=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --settings) settings=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
IFS=, read -r -a runs <<< "$settings"
for s in "${runs[@]}"; do
  case $s in one | ranks | pair | threads | tcp | blocking | nodes-1g | nodes-10g | nodes-1g-blocking | nodes-10g-blocking) ;;
    *) echo "bench-mpi.sh: unknown setting '$s'" >&2; exit 2 ;; esac
done
# Progress is logged every 10 steps: the timing reads the log at steps 10 and --steps.
[[ $steps =~ ^[1-9][0-9]*$ && $steps -ge 20 && $((steps % 10)) -eq 0 ]] ||
  { echo "bench-mpi.sh: --steps must be a multiple of 10, at least 20" >&2; exit 2; }
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "bench-mpi.sh: --repeats must be a positive integer" >&2; exit 2; }
case $arch in
  both) archs=(gru-bahdanau transformer) ;;
  gru-bahdanau | transformer) archs=("$arch") ;;
  *) echo "bench-mpi.sh: --arch gru-bahdanau, transformer or both" >&2; exit 2 ;;
esac
heed=$(realpath "${HEED:-build/heed}")
[[ -x $heed ]] || { echo "bench-mpi.sh: $heed not found: build heed first (or set HEED)" >&2; exit 2; }
command -v mpirun > /dev/null || { echo "bench-mpi.sh: mpirun not found (Debian package openmpi-bin)" >&2; exit 2; }
"$heed" --version | grep -q "MPI:" || { echo "bench-mpi.sh: $heed was built without MPI" >&2; exit 2; }

work=$(mktemp -d -t heed-bench-mpi.XXXXXX)
namespaces=0
cleanup() {
  if ((namespaces)); then
    ip netns del heed-n0 2> /dev/null || true
    ip netns del heed-n1 2> /dev/null || true
    ip link del h0 2> /dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# Two "machines": namespaces heed-n0 (10.77.0.1) and heed-n1 (10.77.0.2) on a veth pair.
make_nodes() {
  [[ $(id -u) -eq 0 ]] || { echo "bench-mpi.sh: the nodes-* settings need root (ip netns, tc)" >&2; exit 2; }
  ip netns del heed-n0 2> /dev/null || true
  ip netns del heed-n1 2> /dev/null || true
  ip link del h0 2> /dev/null || true  # left in the root namespace by a setup that failed half-way
  ip netns add heed-n0 && ip netns add heed-n1 && namespaces=1
  ip link add h0 type veth peer name h1
  ip link set h0 netns heed-n0 && ip link set h1 netns heed-n1
  ip -n heed-n0 addr add 10.77.0.1/24 dev h0 && ip -n heed-n1 addr add 10.77.0.2/24 dev h1
  for n in 0 1; do ip -n heed-n$n link set lo up && ip -n heed-n$n link set h$n up; done
  cat > "$work/netns-agent" << 'SH'
#!/bin/sh
# Open MPI's rsh agent: "HOST COMMAND..." runs COMMAND in HOST's namespace.
host=$1; shift
case $host in 10.77.0.1) ns=heed-n0 ;; 10.77.0.2) ns=heed-n1 ;; *) echo "netns-agent: unknown host $host" >&2; exit 1 ;; esac
exec ip netns exec "$ns" sh -c "$*"
SH
  chmod +x "$work/netns-agent"
}
# Limits both ends of the link to RATE (tc tbf).
limit_link() {
  for n in 0 1; do
    tc -n heed-n$n qdisc replace dev h$n root tbf rate "$1" burst 4mb latency 100ms
  done
}
[[ ,$settings, == *,nodes-* ]] && make_nodes
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
mpi=(mpirun -np 2 --bind-to core)

# Seconds per update between the log lines of steps 10 and N (metrics.jsonl "elapsed").
seconds_per_update() {
  python3 - "$1/metrics.jsonl" "$steps" << 'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"train"' in l]
t = {r["step"]: r["elapsed"] for r in rows}
n = int(sys.argv[2])
print(f"{(t[n] - t[10]) / (n - 10):.5f}")
PY
}
# Mean of a metrics.jsonl field over the train records after step 10.
field_mean() {
  python3 - "$1/metrics.jsonl" "$2" << 'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"train"' in l]
vals = [r[sys.argv[2]] for r in rows if r["step"] > 10 and sys.argv[2] in r]
print(f"{sum(vals) / len(vals):.3f}" if vals else "-")
PY
}
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for a in "${archs[@]}"; do
  config=configs/$a.json
  # One tokenizer and one encoded corpus for every run: only the updates are timed.
  "$heed" -q --threads 2 train -c "$config" -m "$work/$a-prep" --set training.max_steps=1 \
    --set data.dev.src= --set data.dev.tgt= --set data.cache_dir="$work/$a-cache"
  # The benchmark's batch is 2,000 padded tokens per process, whatever the recipe's (the
  # README's figures were measured so).
  common=(-c "$config" --set tokenizer.path="$work/$a-prep/tokenizer.json" --set data.cache_dir="$work/$a-cache"
    --set data.dev.src= --set data.dev.tgt= --set training.max_steps="$steps" --set training.log_every=10
    --set training.validate_every=1000000 --set training.batch_tokens=2000)
  declare -A times=() mb=() least=() most=()
  for ((r = 1; r <= repeats; r++)); do
    for s in "${runs[@]}"; do
      dir=$work/$a-$s-$r
      case $s in
        one) "$heed" -q --threads 1 train "${common[@]}" -m "$dir" --set training.accumulate=2 ;;
        threads) "$heed" -q --threads 2 train "${common[@]}" -m "$dir" --set training.accumulate=2 ;;
        ranks) "${mpi[@]}" "$heed" -q --threads 1 train "${common[@]}" -m "$dir" ;;
        pair)
          "$heed" -q --threads 1 train "${common[@]}" -m "$dir-twin" --set training.accumulate=1 &
          "$heed" -q --threads 1 train "${common[@]}" -m "$dir" --set training.accumulate=1
          wait
          rm -rf "$dir-twin" ;;
        tcp) "${mpi[@]}" --mca btl tcp,self "$heed" -q --threads 1 train "${common[@]}" -m "$dir" ;;
        blocking) "${mpi[@]}" "$heed" -q --threads 1 train "${common[@]}" -m "$dir" --set training.reduce_overlap=false ;;
        nodes-*)
          overlap=true
          [[ $s == *-blocking ]] && overlap=false
          rate=${s#nodes-}
          limit_link "${rate%-blocking}bit"
          ip netns exec heed-n0 mpirun -np 2 --host 10.77.0.1:1,10.77.0.2:1 --mca plm_rsh_agent "$work/netns-agent" \
            --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
            --bind-to none "$heed" -q --threads 1 train "${common[@]}" -m "$dir" --set training.reduce_overlap=$overlap ;;
      esac
      times[$s]+="$(seconds_per_update "$dir") "
      mb[$s]=$(field_mean "$dir" allreduce_mb_per_step)
      least[$s]+="$(field_mean "$dir" allreduce_wait_ms_per_step_min) "
      most[$s]+="$(field_mean "$dir" allreduce_wait_ms_per_step_max) "
      rm -rf "$dir"
    done
  done
  echo
  echo "== $a: seconds per update (median of $repeats; updates 11..$steps; global batch 2 x 2000 tokens)"
  for s in "${runs[@]}"; do
    # shellcheck disable=SC2086
    printf '  %-9s %8.4f s   runs: %s\n' "$s" "$(median ${times[$s]})" "${times[$s]}"
  done
  if [[ -n ${times[one]:-} ]]; then
    # shellcheck disable=SC2086
    one=$(median ${times[one]})
    for s in "${runs[@]}"; do
      [[ $s == one ]] && continue
      # shellcheck disable=SC2086
      awk -v o="$one" -v x="$(median ${times[$s]})" -v s="$s" 'BEGIN { printf "  one/%-9s %.3f%s\n", s, o/x,
        (s == "ranks") ? sprintf(" (target >= 1.85: scaling efficiency %.1f %%)", 50*o/x) : "" }'
    done
  fi
  for s in "${runs[@]}"; do
    [[ ${mb[$s]:-} == "" || ${mb[$s]} == - ]] && continue
    # shellcheck disable=SC2086
    printf '  %-9s all-reduce %s MB/update; waiting after backward, ms/update:\n' "$s" "${mb[$s]}"
    printf '  %-9s   least-waiting rank %s (the all-reduce backward did not hide; runs: %s)\n' "" \
      "$(median ${least[$s]})" "${least[$s]}"
    printf '  %-9s   most-waiting rank %s (also waiting for slower ranks; runs: %s)\n' "" \
      "$(median ${most[$s]})" "${most[$s]}"
  done
  unset times mb least most
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
