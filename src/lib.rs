//! Library half of the `pisa` package: pieces the command line, the benchmarks and the
//! end-to-end tests share.

pub mod bundled;
pub mod machine;
pub mod progress;
#[cfg(feature = "dpdk")]
pub mod swx;
pub mod workload;
