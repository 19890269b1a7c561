#!/usr/bin/env bash
# Load benchmark of `heed serve` on loopback, beside offline `heed translate` on the same
# sentences (data/test.en + data/dev.en, 1000 lines), bounded in requests and in time:
#   1. offline: `heed --threads T translate` on all the sentences (sentences/s as heed logs it,
#      model loading excluded), and `heed --threads 1 translate --batch-size 1` on the first L
#      (seconds per sentence: one sentence decoded alone, as a lone client's is);
#   2. the server (`heed --threads T serve`), warmed up, then: 32 clients sending one sentence
#      per request (throughput, p50/p99 latency; every answer checked against translate's) and
#      1 client (latency of one sentence). Both are run 3 times, each time right after its
#      offline counterpart (the server at rest meanwhile), and compared as medians: on a shared
#      machine the speed drifts by 10-15 % between minutes;
#   3. 32 clients for the memory run (RSS before it, and
#      after each tenth of it: at once, and 1 s later, when the server is at rest and has given
#      its free heap back).
# Usage: scripts/bench-serve.sh MODEL_DIR [full|quick]
#   full: 3000 requests for throughput, L = 500, 100,000 requests for memory; quick: 300, 50, 2000.
# Environment: HEED (default build/heed), SERVE_LOAD (default build/heed-serve-load, built here
#   when it is the default and build/ exists: no build makes it otherwise), THREADS
#   (default 2), MAX_SECONDS (time bound of each load run, default 3600), KEEP=1 keeps the work
#   directory.
# Sentences are never cut (translate --max-input-length and serve --max-sentence-length 1000), so
# that both sides translate the same text. The client runs on the same machine and takes CPU from the server: its CPU time (and the
# server's) is reported for each run, so the throughput can be read with that in mind.
set -euo pipefail
shopt -s inherit_errexit  # a command failing inside $(...) stops the script: no figure from a failed run

root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:?usage: $0 MODEL_DIR [full|quick]}
mode=${2:-full}
heed=${HEED:-$root/build/heed}
load=${SERVE_LOAD:-$root/build/heed-serve-load}
threads=${THREADS:-2}
max_seconds=${MAX_SECONDS:-3600}
case "$mode" in
  full) throughput_requests=3000 latency_lines=500 memory_requests=100000 ;;
  quick) throughput_requests=300 latency_lines=50 memory_requests=2000 ;;
  *) echo "mode must be full or quick, got '$mode'" >&2; exit 2 ;;
esac
if [ -z "${SERVE_LOAD:-}" ] && [ -d "$root/build" ]; then
  cmake --build "$root/build" --target heed-serve-load > /dev/null
fi
for tool in "$heed" "$load"; do
  [ -x "$tool" ] || { echo "missing: $tool (build it: cmake --build build --target heed heed-serve-load)" >&2; exit 1; }
done

work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -TERM "$server"; wait "$server" || true; fi
  if [ "${KEEP:-0}" = 1 ]; then echo "work directory: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

cat "$root/data/test.en" "$root/data/dev.en" > "$work/sentences.txt"
head -n "$latency_lines" "$work/sentences.txt" > "$work/latency.txt"

# A field of heed-serve-load's JSON line: field FILE KEY
field() { grep -o "\"$2\":[-0-9.e+]*" "$1" | head -1 | cut -d: -f2; }
# The sum of a count over the runs whose names start with NAME: sum_of NAME KEY
sum_of() { cat "$work"/$1*.json | grep -o "\"$2\":[0-9]*" | cut -d: -f2 | awk '{s += $1} END {print s}'; }
# CPU seconds the server has used so far (user + system).
server_cpu() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$server/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }

# offline_rate: sentences/s of `translate` on all the sentences (writes offline.txt, the answers
# every request is checked against); alone_ms: ms per sentence decoded alone.
offline_rate() {
  "$heed" --threads "$threads" translate -m "$model" --max-input-length 1000 -i "$work/sentences.txt" \
    -o "$work/offline.txt" 2> "$work/offline.log"
  grep -o '[0-9.]* sentences/s' "$work/offline.log" | tail -1 | cut -d' ' -f1
}
alone_ms() {
  "$heed" --threads 1 translate -m "$model" --max-input-length 1000 --batch-size 1 -i "$work/latency.txt" \
    -o /dev/null 2> "$work/alone.log"
  sed -n 's/.* \([0-9]*\) sentences, .* in \([0-9.]*\) s:.*/\2 \1/p' "$work/alone.log" | tail -1 |
    awk '{printf "%.3f", $1 / $2 * 1000}'
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
offline_rate > /dev/null

echo "== server: heed --threads $threads serve"
"$heed" --threads "$threads" serve -m "$model" --port 0 --max-sentence-length 1000 > "$work/url.txt" 2> "$work/serve.log" &
server=$!
for _ in $(seq 600); do [ -s "$work/url.txt" ] && break; sleep 0.1; done
url=$(head -1 "$work/url.txt")
[ -n "$url" ] || { cat "$work/serve.log" >&2; exit 1; }

# run NAME CLIENTS REQUESTS INPUT EXPECT: one load run, with the server's CPU time around it.
run() {
  local name=$1 clients=$2 requests=$3 input=$4 expect=$5 cpu0 cpu1
  cpu0=$(server_cpu)
  "$load" --url "$url" -i "$input" --expect "$expect" --clients "$clients" --requests "$requests" \
    --max-seconds "$max_seconds" > "$work/$name.json" || true
  cpu1=$(server_cpu)
  awk -v a="$cpu0" -v b="$cpu1" 'BEGIN {printf "%.2f", b - a}' > "$work/$name.server_cpu"
  echo "   $(cat "$work/$name.json")"
  echo "   server CPU seconds: $(cat "$work/$name.server_cpu")"
}

head -n "$latency_lines" "$work/offline.txt" > "$work/latency.expect"
echo "== warm-up: 32 clients, 500 requests"
run warmup 32 500 "$work/sentences.txt" "$work/offline.txt"
offline_rates="" rates="" alone_series="" latency_means="" latency_p50s=""
for round in 1 2 3; do
  echo "== round $round: offline, then the server"
  offline_rates="$offline_rates $(offline_rate)"
  echo "   offline: $(echo "$offline_rates" | awk '{print $NF}') sentences/s; 32 clients, $throughput_requests requests:"
  run "throughput$round" 32 "$throughput_requests" "$work/sentences.txt" "$work/offline.txt"
  rates="$rates $(field "$work/throughput$round.json" sentences_per_second)"
  alone_series="$alone_series $(alone_ms)"
  echo "   offline: $(echo "$alone_series" | awk '{print $NF}') ms per sentence alone; 1 client, $latency_lines requests:"
  run "latency$round" 1 "$latency_lines" "$work/latency.txt" "$work/latency.expect"
  latency_means="$latency_means $(field "$work/latency$round.json" mean)"
  latency_p50s="$latency_p50s $(field "$work/latency$round.json" p50)"
done
# In ten parts, with the RSS after each: the first parts still bring new batch shapes (and
# their primitives, see ServiceOptions::max_cached_primitives); the curve shows the level. RSS is
# read as the part ends (as under load) and 1 s later, at rest (the server trims its heap after
# 500 ms without work).
sleep 1
rss_start=$(rss_kb)
echo "== memory: 32 clients, $memory_requests requests in 10 parts (RSS $rss_start kB before, at rest)"
rss_series="" busy_series=""
for part in 1 2 3 4 5 6 7 8 9 10; do
  run "memory$part" 32 $((memory_requests / 10)) "$work/sentences.txt" "$work/offline.txt" > /dev/null
  busy_series="$busy_series $(rss_kb)"
  sleep 1
  rss_series="$rss_series $(rss_kb)"
  echo "   part $part: $(field "$work/memory$part.json" requests) requests," \
       "$(field "$work/memory$part.json" errors) errors, $(field "$work/memory$part.json" mismatches) mismatches," \
       "RSS $(echo "$busy_series" | awk '{print $NF}') kB as it ends, $(rss_kb) kB at rest"
done
rss_end=$(rss_kb)
rss_part1=$(echo "$rss_series" | awk '{print $1}')
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$server/status")
memory_errors=$(sum_of memory errors)
memory_mismatches=$(sum_of memory mismatches)

kill -TERM "$server"
status=0
wait "$server" || status=$?
server=""

rate=$(echo "$rates" | median)
offline=$(echo "$offline_rates" | median)
alone=$(echo "$alone_series" | median)
latency_mean=$(echo "$latency_means" | median)
echo
echo "== summary ($mode, $threads threads, $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg))"
echo "rounds: 32 clients$rates sentences/s, offline$offline_rates; 1 client$latency_means ms, offline alone$alone_series ms"
awk -v r="$rate" -v o="$offline" 'BEGIN {printf "32 clients (medians): %.1f sentences/s vs offline %.1f: %.1f %% (target >= 80 %%)\n", r, o, 100 * r / o}'
echo "32 clients, round 2: latency p50 $(field "$work/throughput2.json" p50) ms, p99 $(field "$work/throughput2.json" p99) ms;" \
     "client used $(field "$work/throughput2.json" client_cpu_seconds) CPU s, server $(cat "$work/throughput2.server_cpu") CPU s" \
     "in $(field "$work/throughput2.json" seconds) s"
awk -v m="$latency_mean" -v p="$(echo "$latency_p50s" | median)" -v a="$alone" \
  'BEGIN {printf "1 client (medians): latency mean %.2f ms, p50 %.2f ms vs offline %.2f ms per sentence: %.2fx (target <= 1.2x)\n", m, p, a, m / a}'
echo "memory: RSS at rest $rss_start kB before $memory_requests requests, $rss_part1 kB after the first tenth," \
     "$rss_end kB at the end (peak $hwm kB); at rest after each tenth:$rss_series; as each tenth ends:$busy_series"
echo "answers differing from heed translate: throughput $(sum_of throughput mismatches)," \
     "latency $(sum_of latency mismatches), memory $memory_mismatches;" \
     "errors: $(sum_of throughput errors), $(sum_of latency errors), $memory_errors"
echo "server exit status after SIGTERM: $status"
