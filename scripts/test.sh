#!/usr/bin/env bash
# The project's test command (README "Run the tests"; .ci/run calls exactly this).
#
# 1. installs the Debian packages the tests use (only when running as root and something is
#    missing),
# 2. checks formatting and lints,
# 3. runs every test of the workspace (unit, golden STF/pcap, frontend ok/err, namespace e2e,
#    and every fuzz target replayed over its committed seeds and mutations of them:
#    fuzz/targets/tests/replay.rs; the libFuzzer runs are scripts/fuzz-smoke.sh and
#    scripts/fuzz-long.sh, by hand).
#
# Tests that need root (network namespaces, veth, AF_PACKET/AF_XDP/DPDK on them) or a package
# (tshark, scapy) are `#[ignore = "needs ..."]`. As root (CI) they run, with
# `--include-ignored`, and fail if they cannot; as another user they show as "ignored".
set -euo pipefail
cd "$(dirname "$0")/.."

# Each section's heading carries the seconds since the start, so a log shows where the time went.
section() { echo "== [${SECONDS} s] $*"; }

PACKAGES=(tshark python3-scapy iproute2 ethtool iperf3 iputils-ping python3-pip python3-venv pkg-config libdpdk-dev dpdk gcc clang libclang-dev etcd-server zookeeper)

# As root, tests/readme.rs runs the README's set-up block (`cargo install --locked --path .`, a
# release build) before its blocks. That build starts here, in the background: it uses the
# cores while packages download and install and while the other builds (a separate profile
# directory and lock) wait on one crate; the README test then finds it done. Its log is
# printed if it fails.
# (It needs a C linker, `cc`: where there is none yet it starts after the packages are in.)
install_pid=
start_install() {
    [ "$(id -u)" = 0 ] && [ -z "$install_pid" ] && command -v cc >/dev/null || return 0
    mkdir -p target
    section "cargo install --locked --path . (the README's set-up block, in the background)"
    cargo install --locked --path . --quiet >target/readme-install.log 2>&1 &
    install_pid=$!
}
start_install
# On an early exit the build stops, its compilers first: a rustc left running after its cargo
# would go on writing into target/release beside the next run's build (seen: a crate's rlib and
# rmeta from two compilations, "required to be available in rlib format").
stop_install() {
    [ -n "$install_pid" ] || return 0
    pkill -TERM -P "$install_pid" 2>/dev/null || true
    kill "$install_pid" 2>/dev/null || true
    wait "$install_pid" 2>/dev/null || true
}
trap stop_install EXIT
wait_for_install() {
    [ -n "$install_pid" ] || return 0
    if ! wait "$install_pid"; then
        cat target/readme-install.log >&2
        echo "cargo install --locked --path . failed" >&2
        exit 1
    fi
    install_pid=
}

if [ "$(id -u)" = 0 ]; then
    missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        section "installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    # The real P4Runtime clients the P4Runtime tests drive pisa with (PyPI): p4runtime-shell,
    # which brings the p4runtime package's protocol descriptors.
    if ! python3 -c "import p4runtime_sh, p4.v1.p4runtime_pb2, ptf" >/dev/null 2>&1; then
        section "installing p4runtime-shell and ptf (PyPI)"
        python3 -m pip install --quiet --break-system-packages p4runtime-shell==0.0.6 ptf==0.12.0
    fi
    # finsy needs a newer protobuf than p4runtime-shell pins: it gets a virtualenv of its own,
    # where tests/p4runtime_shell.rs looks for it.
    if [ ! -x /opt/pisa/finsy/bin/python ]; then
        section "installing finsy (PyPI) into /opt/pisa/finsy"
        python3 -m venv /opt/pisa/finsy
        /opt/pisa/finsy/bin/pip install --quiet finsy==0.30.0
    fi
    # DPDK's internal SWX pipeline headers (Debian's dpdk source package), for the compiled SWX
    # of `pisa bench pipeline --against swx` and tests/swx_against.rs (interpreted without).
    scripts/dpdk-swx-headers.sh || echo "warning: no DPDK SWX pipeline headers: SWX runs interpreted"
    start_install
else
    section "not root: skipping package installation; tests that need root or packages stay ignored"
fi

section "cargo fmt --check"
cargo fmt --all -- --check

# As root the optional backends' system packages are installed (above): the workspace is then
# built once with them (AF_XDP and DPDK ports, DPDK's SWX pipeline), lints and tests alike,
# rather than once without and again with them.
features=()
if [ "$(id -u)" = 0 ]; then
    features=(--features pisa/afxdp,pisa/dpdk)
fi

section "cargo clippy ${features[*]}"
cargo clippy --workspace --all-targets "${features[@]}" --quiet -- -D warnings

# The layers: the model depends on no other crate of pisa's; host protocols and the NIC reach
# a switch over the wire only (no model, frontend or control plane under them).
section "layers"
layer_check() { # crate, the crates it must not depend on (a regex)
    deps=$(cargo tree -q -p "$1" -e normal --prefix none | { grep -oE '^pisa-[a-z0-9-]+' || true; } \
        | { grep -vx "$1" || true; } | sort -u)
    bad=$(echo "$deps" | grep -xE "$2" || true)
    if [ -n "$bad" ]; then
        echo "layering: $1 depends on" $bad >&2
        exit 1
    fi
}
layer_check pisa-pipeline 'pisa-.*'
layer_check pisa-hosts 'pisa-(pipeline|p4|control|labs)'
layer_check pisa-rdma 'pisa-(pipeline|p4|control|labs|hosts)'

if [ "$(id -u)" = 0 ]; then
    # As root the ignored tests (they need root or the packages installed above) run too; not
    # the ones ignored as measurements or soaks, which are no checks.
    # With the features the AF_XDP and DPDK tests (dataplane's root_afxdp and root_dpdk, the
    # live switch over both in netns_backends and netns_afxdp_restart, DPDK's SWX pipeline
    # against pisa in swx_against and the lib's swx:: tests) are in this run too.
    section "cargo test ${features[*]} --no-run (built beside the release build)"
    cargo test --workspace "${features[@]}" --no-run --quiet
    # The tests run alone: some measure time (timeouts, rates) and must not share the cores.
    wait_for_install
    section "cargo test ${features[*]} (with the ignored root and package tests)"
    cargo test --workspace "${features[@]}" --no-fail-fast -- --include-ignored \
        --skip bench_pipe_threads --skip failover_times_table \
        --skip soak_impaired_streams --skip soak_mixed_operations
else
    section "cargo test"
    cargo test --workspace --no-fail-fast
fi

section "all passed"
