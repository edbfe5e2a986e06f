#!/usr/bin/env bash
# The long fuzz run (not in CI): every fuzz target (or those named) for PISA_FUZZ_RUNS inputs
# each (default 10 million), keeping the corpus under fuzz/corpus/<target>. Prints, per target,
# the inputs run, the time taken and the corpus size; any crash stops the run with the input
# under fuzz/artifacts/<target>. Hours on a few cores: run it on a spare machine, e.g.
#   PISA_FUZZ_JOBS=8 scripts/fuzz-long.sh p4_compile labs_topology
# PISA_FUZZ_CODEGEN_UNITS=16 builds with 16 codegen units (a faster build, slower fuzzers); by
# default cargo-fuzz's one unit per crate. Both with AddressSanitizer, which the smoke run
# (scripts/fuzz-smoke.sh) leaves out.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${PISA_FUZZ_RUNS:-10000000}
jobs=${PISA_FUZZ_JOBS:-1}
build=(-O ${PISA_FUZZ_CODEGEN_UNITS:+--codegen-units "$PISA_FUZZ_CODEGEN_UNITS"})
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked --quiet
fi
export RUSTC_BOOTSTRAP=1
shopt -s nullglob
targets=${*:-$(cargo fuzz list)}
for t in $targets; do
    cargo fuzz build "${build[@]}" "$t" >/dev/null
    mkdir -p "fuzz/corpus/$t"
    log="fuzz/$t.long.log"
    start=$(date +%s)
    # With several jobs libFuzzer runs one worker per job (-runs is per worker), each logging to
    # fuzz-<n>.log in the working directory; with one it runs in this process.
    per_job=$(( (runs + jobs - 1) / jobs ))
    par=()
    if [ "$jobs" -gt 1 ]; then
        par=(-jobs="$jobs" -workers="$jobs")
    fi
    rm -f fuzz-[0-9]*.log
    cargo fuzz run "${build[@]}" "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- -runs="$per_job" "${par[@]}" \
        -rss_limit_mb=4096 -print_final_stats=1 >"$log" 2>&1 || {
        tail -n 40 "$log"
        echo "fuzz target $t failed; the input is under fuzz/artifacts/$t"
        exit 1
    }
    secs=$(( $(date +%s) - start ))
    # With several jobs the parent copies each worker's log into its own when the worker
    # ends, so the parent's log alone holds every worker's count (adding fuzz-<n>.log too
    # would count each input twice).
    done_runs=$(awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}' "$log")
    rm -f fuzz-[0-9]*.log
    echo "$t: $done_runs inputs in ${secs}s, corpus $(ls "fuzz/corpus/$t" | wc -l) files, no crash"
done
