#!/usr/bin/env bash
# Replay throughput benchmark (docs/PERFORMANCE.md). Not a test: it prints figures.
#
# Builds the release binary and the corpus generator (examples/synth_corpus.rs), writes a
# deterministic corpus of BENCH_MB megabytes into a temporary directory, then measures in
# one run, on a warm page cache:
#   - the raw read floor: `cat` of every corpus file to /dev/null;
#   - `hindsight replay CORPUS --format json --out REPORT` end to end, with `--threads 1`
#     and with the default thread count (one per core).
# Each measurement is repeated BENCH_REPS times; the median is reported (best in brackets).
# Peak RSS comes from GNU time (`/usr/bin/time -v`) when it is installed.
#
#   scripts/bench.sh                  # 100 MB corpus
#   BENCH_MB=300 scripts/bench.sh     # a larger one
#
# Environment: BENCH_MB (default 100), BENCH_SEED (7), BENCH_REPS (3), BENCH_PROJECTS (8),
# BENCH_KEEP=1 keeps the temporary directory, TMPDIR picks where it goes.
# Needs bash, coreutils and the Rust toolchain; nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."

mb=${BENCH_MB:-100}
seed=${BENCH_SEED:-7}
reps=${BENCH_REPS:-3}
projects=${BENCH_PROJECTS:-8}
for v in mb seed reps projects; do
    if [[ ! ${!v} =~ ^[0-9]+$ ]] || { [[ $v != seed ]] && ((${!v} < 1)); }; then
        echo "bench: BENCH_${v^^} must be a positive integer (got '${!v}')" >&2
        exit 2
    fi
done

echo "== building (release)"
cargo build --release --locked --example synth_corpus --bin hindsight
target=${CARGO_TARGET_DIR:-target}
hindsight=$target/release/hindsight
synth=$target/release/examples/synth_corpus
[[ -x $hindsight && -x $synth ]] || {
    echo "bench: built binaries not found under $target/release" >&2
    exit 2
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hindsight-bench.XXXXXX")
cleanup() {
    if [[ ${BENCH_KEEP:-0} == 1 ]]; then
        echo "bench: kept $tmp"
    else
        rm -rf -- "$tmp"
    fi
}
trap cleanup EXIT

# Refuse early if the corpus (plus a margin) would not fit.
if avail=$(df -Pk -- "$tmp" 2>/dev/null); then
    read -r _ _ _ avail_kb _ < <(printf '%s\n' "$avail" | tail -n 1)
    if [[ $avail_kb =~ ^[0-9]+$ ]] && ((avail_kb < mb * 1000 * 12 / 10 + 50000)); then
        echo "bench: not enough free space for a ${mb} MB corpus (${avail_kb} KB available)" >&2
        exit 2
    fi
fi

corpus=$tmp/corpus
echo "== generating ${mb} MB corpus (seed ${seed}, ${projects} projects)"
"$synth" "$corpus" --mb "$mb" --seed "$seed" --projects "$projects"

# The corpus files, with bash alone (no find/xargs).
shopt -s globstar dotglob nullglob
files=()
for f in "$corpus"/**; do
    [[ -f $f ]] && files+=("$f")
done
run_dirs=("$corpus"/**/.omnius/runs/*/)
nfiles=${#files[@]}
nruns=${#run_dirs[@]}
chunk=500
# Runs CMD... over the corpus files, at most $chunk at a time.
over_files() {
    local i
    for ((i = 0; i < nfiles; i += chunk)); do
        "$@" "${files[@]:i:chunk}"
    done
}
bytes=0 event_bytes=0 frame_bytes=0 nframes=0
while read -r size name; do
    bytes=$((bytes + size))
    case $name in
        */events.jsonl) event_bytes=$((event_bytes + size)) ;;
        */context/*.json) frame_bytes=$((frame_bytes + size)) nframes=$((nframes + 1)) ;;
    esac
done < <(over_files stat -c '%s %n' --)

# Fixed-point helpers: bash arithmetic is integer only.
# decimal N D P: N/D with P decimals.
decimal() {
    local n=$1 d=$2 p=${3:-1} scale=1 i q
    for ((i = 0; i < p; i++)); do scale=$((scale * 10)); done
    q=$(((n * scale + d / 2) / d))
    if ((p == 0)); then
        printf '%d' "$q"
    else
        printf '%d.%0*d' $((q / scale)) "$p" $((q % scale))
    fi
}

now_ns() {
    if [[ -n ${EPOCHREALTIME:-} ]]; then
        local t=${EPOCHREALTIME/[.,]/}
        printf '%s000' "$t"
    else
        date +%s%N
    fi
}

gnu_time=0
if [[ -x /usr/bin/time ]] && /usr/bin/time -v -o /dev/null true 2>/dev/null; then
    gnu_time=1
fi

# timed NAME CMD...: runs CMD once; sets elapsed_ns and rss_kb ("" when unknown: no GNU
# time, or CMD is a shell function).
timed() {
    local name=$1 start end rc=0 wrap=0
    shift
    rss_kb=""
    if ((gnu_time)) && [[ $(type -t "$1") == file ]]; then
        wrap=1
    fi
    start=$(now_ns)
    if ((wrap)); then
        /usr/bin/time -v -o "$tmp/time.txt" "$@" 2>"$tmp/stderr.txt" || rc=$?
    else
        "$@" 2>"$tmp/stderr.txt" || rc=$?
    fi
    end=$(now_ns)
    elapsed_ns=$((end - start))
    if ((rc != 0)); then
        echo "bench: '$name' failed with exit code $rc:" >&2
        cat "$tmp/stderr.txt" >&2
        exit 1
    fi
    if ((wrap)); then
        local line
        while IFS= read -r line; do
            case $line in
                *"Maximum resident set size"*) rss_kb=${line##*: } ;;
            esac
        done <"$tmp/time.txt"
    fi
}

# measure NAME CMD...: BENCH_REPS runs; sets median_ns, best_ns, peak_kb, warnings.
measure() {
    local name=$1 r times=()
    peak_kb=""
    for ((r = 0; r < reps; r++)); do
        timed "$@"
        times+=("$elapsed_ns")
        if [[ -n $rss_kb ]] && { [[ -z $peak_kb ]] || ((rss_kb > peak_kb)); }; then
            peak_kb=$rss_kb
        fi
    done
    mapfile -t times < <(printf '%s\n' "${times[@]}" | sort -n)
    best_ns=${times[0]}
    median_ns=${times[$((reps / 2))]}
    warnings=$(wc -l <"$tmp/stderr.txt")
    echo "   ${name}: $(printf '%s ' "${times[@]}")ns"
}

cat_all() { over_files cat -- >/dev/null; }

cores=$(nproc 2>/dev/null || echo "?")
echo "== warming the page cache"
cat_all
echo "== measuring (${reps} repetitions each, wall clock in ns)"
measure "read floor" cat_all
floor_ns=$median_ns floor_best=$best_ns
measure "replay --threads 1" \
    "$hindsight" replay "$corpus" --format json --out "$tmp/report-1.json" --threads 1
one_ns=$median_ns one_best=$best_ns one_kb=$peak_kb one_warn=$warnings
measure "replay (default threads)" \
    "$hindsight" replay "$corpus" --format json --out "$tmp/report-n.json"
all_ns=$median_ns all_best=$best_ns all_kb=$peak_kb all_warn=$warnings

identical=no
if [[ $(cksum <"$tmp/report-1.json") == $(cksum <"$tmp/report-n.json") ]]; then
    identical=yes
fi

mbs() { decimal $((bytes * 1000)) "$1" 0; }    # bytes per ns * 1000 = MB/s
secs() { decimal "$1" 1000000000 3; }
ratio() { decimal "$1" "$floor_ns" 1; }
rss() { if [[ -n $1 ]]; then echo "$(decimal "$1" 1024 1) MiB"; else echo "n/a"; fi; }

echo
echo "hindsight replay benchmark"
echo "  corpus:   $(decimal "$bytes" 1000000 1) MB (${bytes} bytes) in ${nfiles} files, ${nruns} runs"
echo "            events.jsonl $(decimal "$event_bytes" 1000000 1) MB, ${nframes} context frames $(decimal "$frame_bytes" 1000000 1) MB"
echo "            (synth_corpus --mb ${mb} --seed ${seed} --projects ${projects})"
echo "  machine:  ${cores} cores; default threads = one per core"
nguards=0
while IFS= read -r line; do
    [[ $line == *'"id":'* ]] && nguards=$((nguards + 1))
done < <("$hindsight" guards --json)
echo "  guards:   ${nguards} (hindsight guards)"
echo "  rustc:    $(rustc --version 2>/dev/null || echo unknown)"
if command -v git >/dev/null 2>&1 && git rev-parse --short HEAD >/dev/null 2>&1; then
    dirty=""
    [[ -z $(git status --porcelain -- src Cargo.toml Cargo.lock 2>/dev/null) ]] || dirty=" (src modified)"
    echo "  commit:   $(git rev-parse --short HEAD)${dirty}"
fi
echo "  runs:     median of ${reps} (best in brackets), warm cache"
echo
printf '  %-30s %16s %16s %9s %12s\n' "measurement" "seconds" "MB/s" "x floor" "peak RSS"
printf '  %-30s %16s %16s %9s %12s\n' "read floor (cat)" \
    "$(secs "$floor_ns") [$(secs "$floor_best")]" "$(mbs "$floor_ns") [$(mbs "$floor_best")]" "1.0" "-"
printf '  %-30s %16s %16s %9s %12s\n' "replay --threads 1" \
    "$(secs "$one_ns") [$(secs "$one_best")]" "$(mbs "$one_ns") [$(mbs "$one_best")]" "$(ratio "$one_ns")" "$(rss "$one_kb")"
printf '  %-30s %16s %16s %9s %12s\n' "replay, ${cores} threads (default)" \
    "$(secs "$all_ns") [$(secs "$all_best")]" "$(mbs "$all_ns") [$(mbs "$all_best")]" "$(ratio "$all_ns")" "$(rss "$all_kb")"
echo
echo "  reports identical for --threads 1 and default: ${identical}"
echo "  stderr lines from replay (warnings): ${one_warn} / ${all_warn}"
echo
echo "  docs/PERFORMANCE.md row:"
echo "  | $(decimal "$bytes" 1000000 1) | ${nfiles} | ${nruns} | $(mbs "$floor_ns") | $(mbs "$one_ns") | $(mbs "$all_ns") | $(ratio "$one_ns")x / $(ratio "$all_ns")x | $(rss "$one_kb") / $(rss "$all_kb") |"
if [[ $identical != yes ]]; then
    echo "bench: the JSON reports differ between thread counts" >&2
    exit 1
fi
