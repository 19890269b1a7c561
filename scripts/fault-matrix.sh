#!/usr/bin/env bash
# The fault matrix: `heed train` hit by what happens to real runs, and after each fault the model
# directory must load, translate and resume to exactly the bytes of an uninterrupted run.
#
#   scripts/fault-matrix.sh [--kills N] [--signals N]   (defaults: 8 random SIGKILLs, 60 signals)
#
# Faults: SIGKILL at random moments and inside checkpoint writes (a temporary file seen in the
# directory); SIGINT, SIGTERM and SIGHUP at random moments, then N more of them that only check
# the exit (a signal once corrupted the heap in about 1 run in 100); a full disk (a small tmpfs, only as
# root where mounting is allowed, else skipped with a message); a second run started in the same
# directory while the first trains. One thread throughout: resumed runs are then bitwise equal.
# Environment: HEED (default build/heed). Exits 1 on the first broken guarantee, naming it.
set -euo pipefail
cd "$(dirname "$0")/.."

kills=8
signals=60
while [[ $# -gt 0 ]]; do
  case $1 in
    --kills) kills=$2; shift 2 ;;
    --signals) signals=$2; shift 2 ;;
    *) echo "usage: scripts/fault-matrix.sh [--kills N] [--signals N]" >&2; exit 2 ;;
  esac
done
[[ $kills =~ ^[0-9]+$ ]] || { echo "fault-matrix.sh: --kills takes a number, got '$kills'" >&2; exit 2; }
[[ $signals =~ ^[0-9]+$ ]] || { echo "fault-matrix.sh: --signals takes a number, got '$signals'" >&2; exit 2; }
heed=$(realpath "${HEED:-build/heed}")
[[ -x $heed ]] || { echo "fault-matrix.sh: $heed not found: build heed first (or set HEED)" >&2; exit 2; }

work=$(mktemp -d -t heed-fault-matrix.XXXXXX)
mounted=""
cleanup() {
  # A failed check can leave a background run behind: it must not outlive the directory it writes.
  local running
  running=$(jobs -p)
  if [[ -n $running ]]; then
    kill -KILL $running 2>/dev/null || true
    wait 2>/dev/null || true
  fi
  if [[ -n $mounted ]]; then umount "$mounted" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "fault-matrix: FAILED: $*" >&2; exit 1; }
run_heed() { "$heed" --threads 1 "$@"; }
# In the background, $! must be heed itself, not a subshell running it: signals go to $!.
start_heed() { "$heed" --threads 1 "$@" & }

# Data: the reverse task, small enough that a run of 40 steps takes seconds.
bash scripts/make-reverse-data.sh "$work/data" 7 > /dev/null
for side in src tgt; do
  head -n 1500 "$work/data/train.$side" > "$work/train.$side"
  head -n 40 "$work/data/dev.$side" > "$work/dev.$side"
done
steps=40
cat > "$work/config.json" <<EOF
{
  "seed": 5,
  "model": {"arch": "gru-bahdanau", "dropout": 0.1,
            "gru": {"emb_dim": 16, "enc_hidden": 24, "dec_hidden": 24, "attn_dim": 16, "readout_dim": 16}},
  "data": {"train": {"src": "$work/train.src", "tgt": "$work/train.tgt"},
           "dev": {"src": "$work/dev.src", "tgt": "$work/dev.tgt"}, "max_length": 40},
  "tokenizer": {"vocab_size": 300},
  "training": {"learning_rate": 0.005, "batch_tokens": 400, "max_steps": $steps, "validate_every": 5,
               "log_every": 5, "keep_last": 100, "validation_metric": "cross-entropy"},
  "decoding": {"beam": 2}
}
EOF

# The reference: one uninterrupted run.
run_heed -q train -c "$work/config.json" -m "$work/reference"
reference_model=$(sha256sum < "$work/reference/model.safetensors")
reference_last=$(sha256sum < "$work/reference/checkpoints/step-$(printf %08d $steps).safetensors")

# Every .safetensors file in the directory is whole (average reads and checks each one).
check_files_whole() {
  local dir=$1 what=$2 file
  while IFS= read -r -d '' file; do
    run_heed -q average -o /dev/null "$file" 2> "$work/average.err" ||
      fail "$what: $file does not load: $(cat "$work/average.err")"
  done < <(find "$dir" -name '*.safetensors' -print0)
}

# The directory translates (if it has a model yet), resumes (or starts afresh when the fault hit
# before the first checkpoint) and ends with the reference's bytes, no temporary file left.
check_recovers() {
  local dir=$1 what=$2
  check_files_whole "$dir" "$what"
  if [[ -f $dir/model.safetensors ]]; then
    local lines
    lines=$(run_heed -q translate -m "$dir" -i "$work/dev.src" | wc -l) ||
      fail "$what: the model directory does not translate"
    [[ $lines -eq 40 ]] || fail "$what: translate gave $lines lines for 40"
  fi
  if [[ -f $dir/trainer_state.safetensors ]]; then
    run_heed -q train --resume -m "$dir" 2> "$work/resume.err" ||
      fail "$what: --resume failed: $(tail -n 1 "$work/resume.err")"
  else
    run_heed -q train -c "$work/config.json" -m "$dir" 2> "$work/resume.err" ||
      fail "$what: a fresh run in the directory failed: $(tail -n 1 "$work/resume.err")"
  fi
  [[ -z $(find "$dir" -name '*.tmp.*') ]] || fail "$what: temporary files left: $(find "$dir" -name '*.tmp.*')"
  [[ $(sha256sum < "$dir/model.safetensors") == "$reference_model" ]] ||
    fail "$what: the resumed model differs from the uninterrupted run's"
  [[ $(sha256sum < "$dir/checkpoints/step-$(printf %08d $steps).safetensors") == "$reference_last" ]] ||
    fail "$what: the resumed last checkpoint differs from the uninterrupted run's"
  echo "fault-matrix: ok: $what"
}

# A random delay in seconds, 0.00 .. max (the reference run's length bounds useful delays).
random_delay() { awk -v max="$1" -v r="$RANDOM" 'BEGIN { printf "%.2f", r / 32767 * max }'; }
start=$(date +%s.%N)
run_heed -q train -c "$work/config.json" -m "$work/timing"
run_seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
echo "fault-matrix: an uninterrupted run takes ${run_seconds}s"

# SIGKILL at random moments: two in each directory, the second one into the resumed run.
for ((k = 1; k <= kills; ++k)); do
  dir=$work/kill-$k
  for round in 1 2; do
    if [[ -f $dir/trainer_state.safetensors ]]; then
      start_heed -q train --resume -m "$dir" 2> /dev/null
    else
      start_heed -q train -c "$work/config.json" -m "$dir" 2> /dev/null
    fi
    pid=$!
    sleep "$(random_delay "$run_seconds")"
    kill -KILL "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
    check_files_whole "$dir" "SIGKILL $k, round $round"
  done
  check_recovers "$dir" "SIGKILL $k twice at random moments"
done

# SIGKILL inside checkpoint writes: the moment a temporary file of an atomic write appears.
for ((k = 1; k <= 3; ++k)); do
  dir=$work/kill-write-$k
  start_heed -q train -c "$work/config.json" -m "$dir" 2> /dev/null
  pid=$!
  shopt -s nullglob
  seen=0
  for ((i = 0; i < 2000000 && seen < k; ++i)); do  # the k-th write seen is the one hit
    temporaries=("$dir"/*.tmp.* "$dir"/checkpoints/*.tmp.*)
    if [[ ${#temporaries[@]} -gt 0 ]]; then
      seen=$((seen + 1))
      # (until that write is done, or heed has ended: a temporary left by an ended process is
      # a finding that check_recovers reports, not a reason to wait for ever)
      [[ $seen -lt $k ]] && while kill -0 "$pid" 2> /dev/null &&
        [[ -n $(echo "$dir"/*.tmp.* "$dir"/checkpoints/*.tmp.*) ]]; do :; done
    fi
    kill -0 "$pid" 2> /dev/null || break
  done
  kill -KILL "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
  shopt -u nullglob
  [[ $seen -eq $k ]] || fail "SIGKILL $k during a checkpoint write: not exercised (the run ended after $seen of the $k writes to hit were seen)"
  check_recovers "$dir" "SIGKILL $k during a checkpoint write (temporary files seen: $seen)"
done

# SIGINT, SIGTERM, SIGHUP: the exit status is 1 (0 if the run ended first) with one error line,
# and a checkpoint is saved once training has begun. signal_run SIG DIR
signal_run() {
  local sig=$1 dir=$2 status=0
  start_heed train -c "$work/config.json" -m "$dir" 2> "$work/signal.err"
  local pid=$!
  # From heed's first log line on: a signal before its handlers exist (while the process is
  # still loading) ends it as it would any program, with nothing begun and nothing to save.
  for _ in $(seq 1000); do [[ -s $work/signal.err ]] || ! kill -0 "$pid" 2> /dev/null && break; sleep 0.01; done
  sleep "$(random_delay "$run_seconds")"
  kill -"$sig" "$pid" 2> /dev/null || true
  wait "$pid" || status=$?
  [[ $status -eq 0 || $status -eq 1 ]] ||
    fail "SIG$sig: exit status $status, expected 1 (or 0); its last line: $(tail -n 1 "$work/signal.err")"
  if [[ $status -eq 1 ]]; then
    [[ $(tail -n 1 "$work/signal.err") == "heed: error: interrupted" ]] ||
      fail "SIG$sig: the last line is not 'heed: error: interrupted': $(tail -n 1 "$work/signal.err")"
    if grep -q "training data:" "$work/signal.err"; then  # training had begun
      grep -q "checkpoint saved at step" "$work/signal.err" || fail "SIG$sig: no checkpoint saved"
    fi
  fi
}
for sig in INT TERM HUP; do
  signal_run "$sig" "$work/signal-$sig"
  check_recovers "$work/signal-$sig" "SIG$sig at a random moment"
done
all=(INT TERM HUP)
for ((k = 0; k < signals; ++k)); do
  signal_run "${all[k % 3]}" "$work/signals"
  rm -rf "$work/signals"
done
echo "fault-matrix: ok: $signals more signals at random moments"

# A second run in the same directory while the first trains: refused, exit 2, naming the PID;
# the first run is not disturbed; metrics.jsonl holds its lines only, in order.
dir=$work/concurrent
start_heed -q train -c "$work/config.json" -m "$dir" 2> /dev/null
pid=$!
while [[ ! -f $dir/trainer_state.safetensors ]] && kill -0 "$pid" 2> /dev/null; do sleep 0.01; done
status=0
run_heed -q train --resume -m "$dir" 2> "$work/second.err" || status=$?
[[ $status -eq 2 ]] || fail "a second run: exit status $status, expected 2"
grep -q "is in use by another training run (PID $pid" "$work/second.err" ||
  fail "a second run: the error does not name PID $pid: $(cat "$work/second.err")"
wait "$pid" || fail "a second run disturbed the first"
awk -F'"step":' 'NF > 1 { split($2, v, /[,}]/); if (v[1] + 0 < last) exit 1; last = v[1] + 0 }' \
  "$dir/metrics.jsonl" || fail "a second run: metrics.jsonl steps are out of order"
[[ $(sha256sum < "$dir/model.safetensors") == "$reference_model" ]] || fail "a second run changed the first run's model"
echo "fault-matrix: ok: a second run in the same directory"

# A full disk: the directory on a tmpfs too small for the whole run. The run fails with an error;
# the checkpoint before stays whole, and the run resumes elsewhere to the same bytes.
reference_bytes=$(du -sb "$work/reference" | cut -f1)
if [[ $(id -u) -ne 0 ]]; then
  echo "fault-matrix: skipped: a full disk (needs root to mount a small tmpfs)"
elif ! mkdir -p "$work/small" || ! mount -t tmpfs -o size=$((reference_bytes / 2)) tmpfs "$work/small" 2> /dev/null; then
  echo "fault-matrix: skipped: a full disk (mounting a tmpfs is not allowed here)"
else
  mounted=$work/small
  status=0
  run_heed -q train -c "$work/config.json" -m "$work/small/model" 2> "$work/full.err" || status=$?
  [[ $status -eq 1 ]] || fail "a full disk: exit status $status, expected 1"
  grep -q "No space left on device" "$work/full.err" || fail "a full disk: the error does not say so: $(tail -n 1 "$work/full.err")"
  [[ $(grep -c "heed: error:" "$work/full.err") -eq 1 ]] || fail "a full disk: not exactly one error line"
  [[ -z $(find "$work/small/model" -name '*.tmp.*') ]] || fail "a full disk: temporary files left behind"
  check_files_whole "$work/small/model" "a full disk"
  cp -a "$work/small/model" "$work/from-full-disk"
  umount "$mounted"
  mounted=""
  check_recovers "$work/from-full-disk" "a full disk, resumed elsewhere"
fi
echo "fault-matrix: all faults survived"
