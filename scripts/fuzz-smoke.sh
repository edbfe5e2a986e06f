#!/usr/bin/env bash
# Runs every fuzz target in fuzz/ briefly (PISA_FUZZ_SECONDS each, default 5) under libFuzzer,
# from its corpus and committed seeds: any crash or panic fails the run. Not in CI (the
# instrumented build of every crate is most of its time there); CI replays the seeds instead
# (fuzz/targets/tests/replay.rs, part of `cargo test --workspace`). Needs cargo-fuzz (installed here when missing) and libFuzzer's
# nightly-only flags, which the stable toolchain accepts with RUSTC_BOOTSTRAP=1.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${PISA_FUZZ_SECONDS:-5}
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked --quiet
fi
export RUSTC_BOOTSTRAP=1
# cargo-fuzz builds release fuzzers with one codegen unit per crate (fast fuzzers, slow builds:
# on 2 cores the crate chain pipeline -> p4 -> control -> labs -> pisa then compiles on one).
# A smoke run needs the build more than the speed: 16 units, as a plain release build, and no
# AddressSanitizer (cargo-fuzz's default; it slows the build and the fuzzers): the smoke looks
# for panics, hangs and crashes; memory errors in the few unsafe blocks are the long runs' job
# (scripts/fuzz-long.sh keeps the sanitizer).
build=(-O --codegen-units 16 --sanitizer none)
targets=$(cargo fuzz list)
bindir=fuzz/target/x86_64-unknown-linux-gnu/release
echo "== $(echo "$targets" | wc -l) fuzz targets, each built, run for ${secs}s and removed"
for t in $targets; do
    echo "== fuzz $t (${secs}s)"
    cargo fuzz build "${build[@]}" "$t" >/dev/null
    mkdir -p "fuzz/corpus/$t"
    log="fuzz/$t.log"
    status=0
    cargo fuzz run "${build[@]}" "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- -max_total_time="$secs" -rss_limit_mb=4096 >"$log" 2>&1 || status=$?
    grep -E "DONE|panicked|ERROR|SUMMARY" "$log" | tail -n 5 || true
    if [ "$status" != 0 ]; then
        tail -n 40 "$log"
        echo "fuzz target $t failed (exit $status); the input is under fuzz/artifacts/$t"
        exit 1
    fi
    # Each instrumented binary is ~150 MB and links every crate; 33 of them kept at once filled
    # CI's disk. The shared libraries stay, so the next target only links.
    rm -f "$bindir/$t" "$bindir/deps/$t"-*
done
echo "== all fuzz targets ran ${secs}s without a crash"
