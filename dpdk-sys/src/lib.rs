//! `pisa-dpdk-sys`: raw, bindgen-generated bindings to the small part of DPDK (>= 22.11, found
//! with pkg-config) that pisa's DPDK port uses: EAL init, device hot-plug, ethdev configure /
//! start / stop / close, the mbuf pool, the SWX pipeline and its control API (librte_pipeline), and the `static inline` burst and mbuf functions (called
//! through C wrappers that build.rs compiles, with the same names as the DPDK functions).
//!
//! Everything here is `unsafe` FFI; the safe layer is `dataplane::dpdk` in `pisa-dataplane`.

#![allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code
)]
#![allow(clippy::all)]

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
