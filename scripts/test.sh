#!/usr/bin/env bash
# The project's test command (README "Run the tests"; .ci/run calls exactly this).
#
# 1. installs the Debian packages the tests use (only when running as root and something is
#    missing; tests that need a package or root skip with a printed reason otherwise),
# 2. checks formatting and lints,
# 3. runs every test of the workspace (unit, golden STF/pcap, frontend ok/err, namespace e2e),
# 4. runs each fuzz target briefly when cargo-fuzz is available.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(tshark python3-scapy iproute2 ethtool iperf3 iputils-ping pkg-config libdpdk-dev dpdk clang libclang-dev)

if [ "$(id -u)" = 0 ]; then
    missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "== installing ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
else
    echo "== not root: skipping package installation; tests that need root or packages will skip"
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings

echo "== cargo test"
cargo test --workspace --no-fail-fast

# The optional backends need system packages (clang for the XDP program, libdpdk-dev), which
# the block above installs only as root.
if [ "$(id -u)" = 0 ]; then
    echo "== cargo clippy (features afxdp,dpdk)"
    cargo clippy -p pisa --features afxdp,dpdk --all-targets --quiet -- -D warnings
    echo "== cargo test (AF_XDP and DPDK ports, features afxdp,dpdk)"
    cargo test -p pisa-dataplane --features afxdp,dpdk --test root_afxdp --test root_dpdk
    echo "== cargo test (live switch over AF_XDP and DPDK ports, features afxdp,dpdk)"
    cargo test -p pisa --features afxdp,dpdk --test netns_backends --test netns_afxdp_restart
fi

if [ -x scripts/fuzz-smoke.sh ]; then
    echo "== fuzz smoke"
    scripts/fuzz-smoke.sh
fi
