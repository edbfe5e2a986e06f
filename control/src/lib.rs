//! The control plane: values as users type them, table-state files (`pisa run --tables`) and the
//! STF test dialect of p4c's and bf-p4c's test suites, all driving a switch through the runtime API;
//! the control socket's server ([`server`]), P4Runtime over gRPC with P4Info generation
//! ([`p4runtime`]) and per-program agents ([`p4ce`], [`mcrdma`]).

pub mod ctl;
pub mod fuzz;
pub mod leo;
pub mod mcrdma;
pub mod onepipe;
pub mod p4ce;
pub mod p4runtime;
pub mod resolve;
pub mod server;
pub mod stf;
pub mod tables_file;
pub mod value;
