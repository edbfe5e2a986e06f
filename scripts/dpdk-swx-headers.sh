#!/usr/bin/env bash
# Installs DPDK's internal SWX pipeline headers (rte_swx_pipeline_internal.h and
# rte_swx_pipeline_spec.h), which the C that rte_swx_pipeline_codegen writes includes and
# Debian's libdpdk-dev does not ship, into /usr/local/include/pisa-dpdk-pipeline (or $1):
# `pisa bench pipeline --against swx` then runs SWX compiled, as DPDK's pipeline example does
# (docs/swx.md). They come from Debian's dpdk source package of the installed libdpdk-dev's
# version (Debian's patches leave lib/pipeline alone, so the upstream tarball's headers are the
# ones the library was built from). Needs root, apt and a Debian package mirror; adds a deb-src
# entry beside the machine's deb one when there is none.
set -euo pipefail
DEST=${1:-/usr/local/include/pisa-dpdk-pipeline}
if [ -f "$DEST/rte_swx_pipeline_internal.h" ] && [ -f "$DEST/rte_swx_pipeline_spec.h" ]; then
    exit 0
fi
version=$(dpkg-query -W -f='${Version}' libdpdk-dev)
if ! apt-cache showsrc "dpdk=$version" 2>/dev/null | grep -q '^Package: dpdk'; then
    src=/etc/apt/sources.list.d/pisa-deb-src.sources
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$src"
    else
        grep -h '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' >/etc/apt/sources.list.d/pisa-deb-src.list
    fi
    apt-get update -qq
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get source --download-only -qq "dpdk=$version" >/dev/null 2>&1)
orig=$(ls "$work"/dpdk_*.orig.tar.xz)
tar -xJf "$orig" -C "$work" --wildcards '*/lib/pipeline/rte_swx_pipeline_internal.h' \
    '*/lib/pipeline/rte_swx_pipeline_spec.h'
mkdir -p "$DEST"
install -m 0644 "$work"/*/lib/pipeline/rte_swx_pipeline_internal.h \
    "$work"/*/lib/pipeline/rte_swx_pipeline_spec.h "$DEST"/
echo "installed DPDK's SWX pipeline headers ($version) in $DEST"
