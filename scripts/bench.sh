#!/usr/bin/env bash
# Replay throughput benchmark (docs/PERFORMANCE.md). Not a test: it prints figures.
#
# Builds the release binary, then for each corpus size in BENCH_MB (megabytes, default
# "100 1000 5000"): checks there is room for it (a size that does not fit is skipped with a
# note), writes one deterministic corpus with `hindsight synth --out DIR --mb SIZE --seed S
# --projects N` into a temporary directory, and measures on it, in the same run and on a
# warm page cache:
#   - the read floor: `cat` of every corpus file to /dev/null, and `wc -l` of every file;
#   - jq, a reference tool doing strictly less work than replay: it sums the
#     `model_usage` tokens of each run from its events.jsonl (no frames, no guards), and
#     its per-run totals must equal replay's `tokens_total`;
#   - `hindsight replay CORPUS --format json --out REPORT` end to end, with `--threads 1`
#     and with the default thread count (one per core); the two reports must be identical.
# Each measurement is repeated BENCH_REPS times; the median is reported (best in brackets),
# in seconds and MB/s of the bytes the tool reads (1 MB = 10^6 bytes), with the ratios of
# its time to the read floor's (cat) and to jq's, and peak RSS from GNU time
# (`/usr/bin/time -v`). The corpus is deleted before the next size is generated.
#
#   scripts/bench.sh                       # 100 MB, 1 GB and 5 GB (if the disk allows)
#   BENCH_MB=100 scripts/bench.sh          # one size
#   BENCH_MB="100 1000" scripts/bench.sh   # several
#
# Environment: BENCH_MB ("100 1000 5000"), BENCH_SEED (7), BENCH_REPS (3), BENCH_PROJECTS
# (8), BENCH_KEEP=1 keeps the temporary directory (and every corpus), TMPDIR picks where
# it goes. Needs bash, coreutils, the Rust toolchain and jq; when jq is missing it is
# installed with `apt-get update && apt-get install -y jq` (through sudo when not root).
# Exit codes: 0 done, 1 a cross-check failed, 2 bad settings or a missing tool.
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=${BENCH_MB:-100 1000 5000}
seed=${BENCH_SEED:-7}
reps=${BENCH_REPS:-3}
projects=${BENCH_PROJECTS:-8}
fail() {
    echo "bench: $*" >&2
    exit 2
}
read -r -a sizes <<<"$sizes"
((${#sizes[@]} > 0)) || fail "BENCH_MB must list at least one size"
for v in "${sizes[@]}" "$seed" "$reps" "$projects"; do
    [[ $v =~ ^[0-9]+$ ]] || fail "BENCH_MB, BENCH_SEED, BENCH_REPS and BENCH_PROJECTS take whole numbers (got '$v')"
done
for v in "${sizes[@]}" "$reps" "$projects"; do
    ((v >= 1)) || fail "BENCH_MB, BENCH_REPS and BENCH_PROJECTS must be at least 1"
done

if ! command -v jq >/dev/null 2>&1; then
    echo "== jq is missing: installing it with apt-get"
    command -v apt-get >/dev/null 2>&1 || fail "jq is missing and there is no apt-get: install jq and rerun"
    sudo=()
    if ((EUID != 0)); then
        command -v sudo >/dev/null 2>&1 || fail "jq is missing: run 'apt-get install -y jq' as root and rerun"
        sudo=(sudo)
    fi
    "${sudo[@]}" apt-get update && "${sudo[@]}" apt-get install -y jq ||
        fail "could not install jq with apt-get"
    command -v jq >/dev/null 2>&1 || fail "jq is still missing after apt-get"
fi

echo "== building (release)"
cargo build --release --locked --bin hindsight
target=${CARGO_TARGET_DIR:-target}
hindsight=$target/release/hindsight
[[ -x $hindsight ]] || fail "built binary not found at $hindsight"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hindsight-bench.XXXXXX")
cleanup() {
    if [[ ${BENCH_KEEP:-0} == 1 ]]; then
        echo "bench: kept $tmp"
    else
        rm -rf -- "$tmp"
    fi
}
trap cleanup EXIT

# over-files LIST CMD...: CMD over the files listed in LIST, at most 500 at a time. A
# script rather than a function, so that GNU time can measure it.
cat >"$tmp/over-files" <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
list=$1
shift
mapfile -t files <"$list"
for ((i = 0; i < ${#files[@]}; i += 500)); do
    "$@" "${files[@]:i:500}"
done
EOF
chmod +x "$tmp/over-files"
# Prompt plus completion tokens of every model_usage record, per run ("project/runId").
jq_sum='reduce inputs as $e ({};
    if $e.type == "model_usage"
    then .[input_filename] += (($e.promptTokens // 0) + ($e.completionTokens // 0))
    else . end)
  | to_entries[] | (.key | split("/")) as $p | "\($p[-5])/\($p[-2])\t\(.value)"'

# decimal N D P: N/D with P decimals (bash arithmetic is integer only).
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

# timed OUT CMD...: runs CMD once, stdout to OUT; sets elapsed_ns and rss_kb ("" without
# GNU time).
timed() {
    local out=$1 start end rc=0 line
    shift
    rss_kb=""
    start=$(now_ns)
    if ((gnu_time)); then
        /usr/bin/time -v -o "$tmp/time.txt" "$@" >"$out" 2>"$tmp/stderr.txt" || rc=$?
    else
        "$@" >"$out" 2>"$tmp/stderr.txt" || rc=$?
    fi
    end=$(now_ns)
    elapsed_ns=$((end - start))
    if ((rc != 0)); then
        echo "bench: '$*' failed with exit code $rc:" >&2
        cat "$tmp/stderr.txt" >&2
        exit 1
    fi
    if ((gnu_time)); then
        while IFS= read -r line; do
            case $line in
                *"Maximum resident set size"*) rss_kb=${line##*: } ;;
            esac
        done <"$tmp/time.txt"
    fi
}

# measure KEY OUT CMD...: BENCH_REPS runs; sets ns_KEY (median), best_KEY, kb_KEY (peak
# RSS) and warn_KEY (stderr lines of the last run).
measure() {
    local key=$1 out=$2 r times=() peak=""
    shift 2
    for ((r = 0; r < reps; r++)); do
        timed "$out" "$@"
        times+=("$elapsed_ns")
        if [[ -n $rss_kb ]] && { [[ -z $peak ]] || ((rss_kb > peak)); }; then
            peak=$rss_kb
        fi
    done
    mapfile -t times < <(printf '%s\n' "${times[@]}" | sort -n)
    printf -v "best_$key" '%s' "${times[0]}"
    printf -v "ns_$key" '%s' "${times[$((reps / 2))]}"
    printf -v "kb_$key" '%s' "$peak"
    printf -v "warn_$key" '%s' "$(wc -l <"$tmp/stderr.txt")"
    echo "   ${key}: $(printf '%s ' "${times[@]}")ns"
}

secs() { decimal "$1" 1000000000 3; }
# row LABEL BYTES KEY: one line of a size's table. x floor and x jq are the measurement's
# median time over cat's and over jq's.
row() {
    local label=$1 b=$2 key=$3 ns best kb xjq="-"
    ns=ns_$key best=best_$key kb=kb_$key
    case $key in jq | one | all) xjq=$(decimal "${!ns}" "$ns_jq" 1) ;; esac
    printf '  %-32s %8s %16s %14s %8s %6s %10s\n' "$label" "$(decimal "$b" 1000000 1)" \
        "$(secs "${!ns}") [$(secs "${!best}")]" "$(mbs "$b" "${!ns}") [$(mbs "$b" "${!best}")]" \
        "$(decimal "${!ns}" "$ns_cat" 1)" "$xjq" "$(rss "${!kb}")"
}
mbs() { decimal $(($1 * 1000)) "$2" 0; } # mbs BYTES NS: bytes per ns * 1000 = MB/s
rss() { if [[ -n $1 ]]; then echo "$(decimal "$1" 1024 1) MiB"; else echo "n/a"; fi; }

cores=$(nproc 2>/dev/null || echo "?")
nguards=0
while IFS= read -r line; do
    [[ $line == *'"id":'* ]] && nguards=$((nguards + 1))
done < <("$hindsight" guards --json)
commit=unknown
if command -v git >/dev/null 2>&1 && git rev-parse --short HEAD >/dev/null 2>&1; then
    commit=$(git rev-parse --short HEAD)
    [[ -z $(git status --porcelain -- src Cargo.toml Cargo.lock 2>/dev/null) ]] || commit+=" (src modified)"
fi
mem_kb=0
if [[ -r /proc/meminfo ]]; then
    while read -r name value _; do
        if [[ $name == MemAvailable: ]]; then mem_kb=$value; fi
    done </proc/meminfo
fi

rows=() notes=() failed=0
shopt -s globstar dotglob nullglob
for mb in "${sizes[@]}"; do
    echo
    # Room for the corpus: `synth --mb` writes projects x runs-per-project runs of 3.9 MB
    # on average (MEAN_RUN_BYTES, src/synth/corpus.rs), at least one run per project; a
    # seed's mean run can be 20% larger, so ask for 40% more, plus 100 MB.
    per=$(((mb * 10 + projects * 39 / 2) / (projects * 39)))
    ((per >= 1)) || per=1
    need_kb=$((per * projects * 3900 * 14 / 10 + 100000))
    avail_kb=""
    if df=$(df -Pk -- "$tmp" 2>/dev/null); then
        read -r _ _ _ avail_kb _ < <(printf '%s\n' "$df" | tail -n 1)
    fi
    if [[ $avail_kb =~ ^[0-9]+$ ]] && ((avail_kb < need_kb)); then
        note="${mb} MB: skipped, it needs about $((need_kb / 1000)) MB free under $tmp and $((avail_kb / 1000)) MB are available"
        echo "== $note"
        notes+=("$note")
        continue
    fi

    corpus=$tmp/corpus-$mb
    echo "== ${mb} MB: generating (hindsight synth --mb ${mb} --seed ${seed} --projects ${projects})"
    start=$(now_ns)
    "$hindsight" synth --out "$corpus" --mb "$mb" --seed "$seed" --projects "$projects"
    echo "   generated in $(secs $(($(now_ns) - start))) s"

    # The corpus files, with bash alone (no find/xargs).
    : >"$tmp/all.list"
    : >"$tmp/events.list"
    for f in "$corpus"/**; do
        if [[ -f $f ]]; then
            printf '%s\n' "$f" >>"$tmp/all.list"
            if [[ $f == */events.jsonl ]]; then printf '%s\n' "$f" >>"$tmp/events.list"; fi
        fi
    done
    bytes=0 event_bytes=0 frame_bytes=0 nframes=0 nfiles=0 nruns=0
    while read -r size name; do
        bytes=$((bytes + size)) nfiles=$((nfiles + 1))
        case $name in
            */events.jsonl) event_bytes=$((event_bytes + size)) nruns=$((nruns + 1)) ;;
            */context/*.json) frame_bytes=$((frame_bytes + size)) nframes=$((nframes + 1)) ;;
        esac
    done < <("$tmp/over-files" "$tmp/all.list" stat -c '%s %n' --)
    if ((mem_kb > 0 && bytes / 1000 > mem_kb * 8 / 10)); then
        note="${mb} MB: the corpus is near or above the available memory ($((mem_kb / 1000)) MB); the page cache may not hold it, so the figures may include disk reads"
        echo "   note: $note"
        notes+=("$note")
    fi

    echo "== ${mb} MB: warming the page cache"
    "$tmp/over-files" "$tmp/all.list" cat -- >/dev/null
    echo "== ${mb} MB: measuring (${reps} repetitions each, wall clock in ns)"
    measure cat /dev/null "$tmp/over-files" "$tmp/all.list" cat --
    measure wc /dev/null "$tmp/over-files" "$tmp/all.list" wc -l --
    measure jq "$tmp/jq-sums.tsv" "$tmp/over-files" "$tmp/events.list" jq -n -r "$jq_sum"
    measure one /dev/null \
        "$hindsight" replay "$corpus" --format json --out "$tmp/report-1.json" --threads 1
    measure all /dev/null \
        "$hindsight" replay "$corpus" --format json --out "$tmp/report-n.json"

    identical=no
    if cmp -s "$tmp/report-1.json" "$tmp/report-n.json"; then identical=yes; fi
    agree=no
    jq -r '.runs[] | "\(.project | split("/") | last)/\(.run_id)\t\(.tokens_total)"' \
        "$tmp/report-1.json" | sort >"$tmp/replay-sums.tsv"
    sort "$tmp/jq-sums.tsv" >"$tmp/jq-sums-sorted.tsv"
    if cmp -s "$tmp/replay-sums.tsv" "$tmp/jq-sums-sorted.tsv" && [[ -s $tmp/replay-sums.tsv ]]; then
        agree=yes
    fi

    echo
    echo "hindsight replay benchmark: --mb ${mb}"
    echo "  corpus:   $(decimal "$bytes" 1000000 1) MB (${bytes} bytes) in ${nfiles} files, ${nruns} runs"
    echo "            events.jsonl $(decimal "$event_bytes" 1000000 1) MB, ${nframes} context frames $(decimal "$frame_bytes" 1000000 1) MB"
    echo "            (hindsight synth --mb ${mb} --seed ${seed} --projects ${projects})"
    echo "  machine:  ${cores} cores; default threads = one per core; $((mem_kb / 1000)) MB available memory"
    echo "  guards:   ${nguards} (hindsight guards)"
    echo "  tools:    $(rustc --version 2>/dev/null || echo rustc unknown); $(jq --version); $(cat --version | head -n 1)"
    echo "  commit:   ${commit}"
    echo "  runs:     median of ${reps} (best in brackets), warm cache; MB/s of the bytes each reads"
    echo
    printf '  %-32s %8s %16s %14s %8s %6s %10s\n' "measurement" "reads MB" "seconds" "MB/s" "x floor" "x jq" "peak RSS"
    row "read floor: cat, every file" "$bytes" cat
    row "wc -l, every file" "$bytes" wc
    row "jq: model_usage tokens per run" "$event_bytes" jq
    row "replay --threads 1" "$bytes" one
    row "replay, ${cores} threads (default)" "$bytes" all
    echo
    echo "  reports identical for --threads 1 and default: ${identical}"
    echo "  jq's per-run token totals equal replay's tokens_total: ${agree} (${nruns} runs)"
    echo "  stderr lines from replay (warnings): ${warn_one} / ${warn_all}"
    [[ $identical == yes ]] || { echo "bench: the JSON reports differ between thread counts" >&2 && failed=1; }
    [[ $agree == yes ]] || { echo "bench: jq and replay disagree on the runs' tokens" >&2 && failed=1; }

    rows+=("| $(decimal "$bytes" 1000000 1) | ${nfiles} | ${nruns} | $(mbs "$bytes" "$ns_cat") | $(mbs "$event_bytes" "$ns_jq") | $(mbs "$bytes" "$ns_one") | $(mbs "$bytes" "$ns_all") | $(decimal "$ns_one" "$ns_cat" 1)x / $(decimal "$ns_all" "$ns_cat" 1)x | $(decimal "$ns_one" "$ns_jq" 1)x / $(decimal "$ns_all" "$ns_jq" 1)x | $(rss "$kb_one") / $(rss "$kb_all") | $(rss "$kb_jq") |")
    [[ ${BENCH_KEEP:-0} == 1 ]] || rm -rf -- "$corpus"
done

echo
if ((${#rows[@]} > 0)); then
    echo "docs/PERFORMANCE.md rows (median of ${reps}; 1 thread / ${cores} threads):"
    echo "| corpus MB | files | runs | read floor (cat) MB/s | jq MB/s (events.jsonl) | replay MB/s, 1 thread | replay MB/s, default | replay ÷ read floor | replay ÷ jq | replay peak RSS | jq peak RSS |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
fi
for note in "${notes[@]}"; do echo "note: $note"; done
((${#rows[@]} > 0)) || fail "no corpus size could be measured"
exit "$failed"
