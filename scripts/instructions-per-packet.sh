#!/usr/bin/env bash
# Instructions per packet of `pisa bench pipeline`'s workloads, counted by callgrind: each
# program and engine runs twice, for N1 and N2 frames (`--packets`), and the difference of the
# two instruction counts over N2 - N1 is the per-packet figure, with set-up (compiling the
# program, filling its tables, generating code) cancelled out. Deterministic and independent
# of the machine's load, unlike wall-clock rates.
#
#   scripts/instructions-per-packet.sh [PISA] [PROGRAMS] [ENGINES]
#
# PISA defaults to target/release/pisa (build it with `cargo build --release` first);
# PROGRAMS to "wire l2l3 switch", ENGINES to "native flat". N1/N2 come from the environment
# (defaults 8192 and 65536: the workloads cycle through 8192 frames, so the difference is
# whole passes over them, after one pass that warmed the buffer pools). The set-up's own
# work (malloc, memcpy, memcmp) differs a little between the two processes with where the
# heap and stack lie, and does not cancel: over one pass (N2 = 16384) it moved the figure of
# one binary by up to 70 from run to run, over seven by under 10. Runs with address-space
# randomization off where `setarch` can. Needs valgrind.
set -euo pipefail
pisa=${1:-target/release/pisa}
programs=${2:-wire l2l3 switch}
engines=${3:-native flat}
n1=${N1:-8192}
n2=${N2:-65536}
command -v valgrind >/dev/null || { echo "needs valgrind" >&2; exit 1; }
[ -x "$pisa" ] || { echo "no $pisa: cargo build --release first" >&2; exit 1; }
norand=""
if setarch "$(uname -m)" -R true 2>/dev/null; then
    norand="setarch $(uname -m) -R"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Total instructions (Ir) of one run of N frames.
count() {
    local out="$tmp/cg.$1.$2.$3"
    # --smc-check=all: the native engine writes the code it then runs.
    $norand valgrind --tool=callgrind --smc-check=all --callgrind-out-file="$out" \
        "$pisa" bench pipeline --program "$1" --engine "$2" --packets "$3" \
        >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
    grep '^summary:' "$out" | awk '{print $2}'
}

printf '%-8s %-7s %12s\n' program engine 'Ir/packet'
for p in $programs; do
    for e in $engines; do
        a=$(count "$p" "$e" "$n1")
        b=$(count "$p" "$e" "$n2")
        printf '%-8s %-7s %12.0f\n' "$p" "$e" "$(echo "($b - $a) / ($n2 - $n1)" | bc -l)"
    done
done
