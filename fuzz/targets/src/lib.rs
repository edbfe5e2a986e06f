//! pisa's fuzz targets: one module per parser of outside input, each with `run(data)`, which
//! must never panic, hang or abort on any bytes. cargo-fuzz's binaries (`fuzz/fuzz_targets/`,
//! `cargo fuzz run NAME`, `scripts/fuzz-long.sh`) call them under libFuzzer; `tests/replay.rs` runs
//! each over its committed seeds (`fuzz/seeds/NAME/`) and mutations of them in the ordinary test run.

mod p4_gen;

pub mod control_ctl_request;
pub mod control_p4ce_wire;
pub mod control_p4runtime_request;
pub mod control_stf;
pub mod control_tables_file;
pub mod dataplane_pcap;
pub mod dataplane_portspec;
pub mod hash_input;
pub mod hosts_acuerdo_ring;
pub mod hosts_leo_app;
pub mod hosts_leo_header;
pub mod hosts_leo_message;
pub mod hosts_mu_join;
pub mod hosts_mu_slot;
pub mod hosts_onepipe_baseline;
pub mod hosts_onepipe_packet;
pub mod hosts_p4ce_late;
pub mod l2l3_packet;
pub mod labs_acuerdo_log;
pub mod labs_leo_wire;
pub mod labs_mcrdma;
pub mod labs_topology;
pub mod labs_zk_jute;
pub mod match_table;
pub mod p4_compile;
pub mod p4_parse;
pub mod pipeline_switch;
pub mod pre_config;
pub mod rdma_decode;
pub mod rdma_endpoint;
pub mod rdma_perf_hello;
pub mod resources_place;
pub mod swx_spec;

/// A target: one input, any bytes; it must not panic, hang or abort.
pub type Target = fn(&[u8]);

/// Every target by name, as cargo-fuzz names its binary.
pub const TARGETS: &[(&str, Target)] = &[
    ("control_ctl_request", control_ctl_request::run),
    ("control_p4ce_wire", control_p4ce_wire::run),
    ("control_p4runtime_request", control_p4runtime_request::run),
    ("control_stf", control_stf::run),
    ("control_tables_file", control_tables_file::run),
    ("dataplane_pcap", dataplane_pcap::run),
    ("dataplane_portspec", dataplane_portspec::run),
    ("hash_input", hash_input::run),
    ("hosts_acuerdo_ring", hosts_acuerdo_ring::run),
    ("hosts_leo_app", hosts_leo_app::run),
    ("hosts_leo_header", hosts_leo_header::run),
    ("hosts_leo_message", hosts_leo_message::run),
    ("hosts_mu_join", hosts_mu_join::run),
    ("hosts_mu_slot", hosts_mu_slot::run),
    ("hosts_onepipe_baseline", hosts_onepipe_baseline::run),
    ("hosts_onepipe_packet", hosts_onepipe_packet::run),
    ("hosts_p4ce_late", hosts_p4ce_late::run),
    ("l2l3_packet", l2l3_packet::run),
    ("labs_acuerdo_log", labs_acuerdo_log::run),
    ("labs_leo_wire", labs_leo_wire::run),
    ("labs_mcrdma", labs_mcrdma::run),
    ("labs_topology", labs_topology::run),
    ("labs_zk_jute", labs_zk_jute::run),
    ("match_table", match_table::run),
    ("p4_compile", p4_compile::run),
    ("p4_parse", p4_parse::run),
    ("pipeline_switch", pipeline_switch::run),
    ("pre_config", pre_config::run),
    ("rdma_decode", rdma_decode::run),
    ("rdma_endpoint", rdma_endpoint::run),
    ("rdma_perf_hello", rdma_perf_hello::run),
    ("resources_place", resources_place::run),
    ("swx_spec", swx_spec::run),
];
