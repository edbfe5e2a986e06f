//! Build script for `pisa-dpdk-sys`: finds libdpdk (>= 22.11) with pkg-config, generates
//! bindings for the functions pisa's DPDK port calls with bindgen, and compiles the C wrappers
//! bindgen writes for DPDK's `static inline` fast-path functions (the burst calls and mbuf
//! helpers), which otherwise have no symbol to link against.

use std::env;
use std::path::PathBuf;

/// Functions the port uses. The `static inline` ones among them get generated C wrappers.
const FUNCTIONS: &[&str] = &[
    "rte_eal_init",
    "rte_eal_cleanup",
    "rte_strerror",
    "rte_socket_id",
    "rte_dev_probe",
    "rte_dev_remove",
    "rte_eal_hotplug_remove",
    "rte_eth_dev_get_port_by_name",
    "rte_eth_dev_info_get",
    "rte_eth_dev_configure",
    "rte_eth_rx_queue_setup",
    "rte_eth_tx_queue_setup",
    "rte_eth_dev_start",
    "rte_eth_dev_stop",
    "rte_eth_dev_close",
    "rte_eth_dev_socket_id",
    "rte_eth_promiscuous_enable",
    "rte_eth_dev_get_mtu",
    "rte_eth_stats_get",
    "rte_eth_rx_burst",
    "rte_eth_tx_burst",
    "rte_pktmbuf_pool_create",
    "rte_pktmbuf_pool_create_by_ops",
    "rte_mempool_free",
    "rte_pktmbuf_alloc",
    "rte_pktmbuf_free",
    "rte_pktmbuf_append",
    "rte_pktmbuf_tailroom",
    // The SWX pipeline (librte_pipeline) and its control API: `pisa bench pipeline --against swx`.
    "rte_swx_pipeline_.*",
    "rte_swx_ctl_pipeline_.*",
    "rte_ring_create",
    "rte_ring_free",
];

const TYPES: &[&str] = &[
    "rte_mbuf",
    "rte_mempool",
    "rte_eth_conf",
    "rte_eth_dev_info",
    "rte_eth_stats",
    "rte_eth_rxconf",
    "rte_eth_txconf",
    "rte_swx_pkt",
    "rte_swx_port_in_ops",
    "rte_swx_port_out_ops",
    "rte_swx_port_in_stats",
    "rte_swx_port_out_stats",
    "rte_swx_table_entry",
    "rte_swx_ctl_pipeline",
];

const VARS: &[&str] = &[
    "RTE_MAX_ETHPORTS",
    "RTE_PKTMBUF_HEADROOM",
    "RTE_MBUF_DEFAULT_BUF_SIZE",
    "RING_F_SP_ENQ",
    "RING_F_SC_DEQ",
];

fn main() {
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-changed=build.rs");

    let lib = match pkg_config::Config::new()
        .atleast_version("22.11")
        .probe("libdpdk")
    {
        Ok(lib) => lib,
        Err(e) => {
            // A build script can only report by failing; say what to install.
            eprintln!(
                "pisa-dpdk-sys: libdpdk >= 22.11 was not found with pkg-config ({e}). \
                 On Debian: apt-get install libdpdk-dev pkg-config clang libclang-dev"
            );
            std::process::exit(1);
        }
    };

    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let wrap_path = out.join("dpdk_static_wrappers");

    let manifest =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let header = manifest.join("wrapper.h");
    let header = header.to_str().expect("crate path is UTF-8");
    let extra_flags = other_cflags();

    let mut builder = bindgen::Builder::default()
        .header(header)
        .allowlist_function("pisa_dpdk_errno")
        .wrap_static_fns(true)
        .wrap_static_fns_path(&wrap_path)
        .derive_default(true)
        .layout_tests(false)
        .generate_comments(false)
        .prepend_enum_name(false)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
    for p in &lib.include_paths {
        builder = builder.clang_arg(format!("-I{}", p.display()));
    }
    // DPDK's headers need the machine flags its pkg-config file lists (e.g. -march).
    for f in &extra_flags {
        builder = builder.clang_arg(f.clone());
    }
    for (k, v) in &lib.defines {
        builder = builder.clang_arg(match v {
            Some(v) => format!("-D{k}={v}"),
            None => format!("-D{k}"),
        });
    }
    for f in FUNCTIONS {
        builder = builder.allowlist_function(f);
    }
    for t in TYPES {
        builder = builder.allowlist_type(t);
    }
    for v in VARS {
        builder = builder.allowlist_var(v);
    }
    let bindings = match builder.generate() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("pisa-dpdk-sys: bindgen failed on the DPDK headers: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = bindings.write_to_file(out.join("bindings.rs")) {
        eprintln!("pisa-dpdk-sys: writing bindings.rs: {e}");
        std::process::exit(1);
    }

    // Compile the wrappers for the `static inline` functions, plus our errno accessor.
    let mut cc = cc::Build::new();
    cc.file(wrap_path.with_extension("c"))
        .file(manifest.join("errno.c"))
        .include(&manifest)
        .warnings(false);
    for f in &extra_flags {
        cc.flag(f);
    }
    for p in &lib.include_paths {
        cc.include(p);
    }
    cc.compile("pisa_dpdk_static_wrappers");
}

/// The non-include, non-define compiler flags libdpdk's pkg-config file asks for (`-include
/// rte_config.h`, `-march=...`): DPDK's headers do not compile without them.
fn other_cflags() -> Vec<String> {
    let out =
        std::process::Command::new(env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into()))
            .args(["--cflags-only-other", "libdpdk"])
            .output();
    let mut flags: Vec<String> = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    if !flags.iter().any(|f| f == "rte_config.h") {
        flags.push("-include".into());
        flags.push("rte_config.h".into());
    }
    flags
}
