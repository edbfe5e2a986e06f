//! LEO (Wan et al., "A Generic and Efficient Communication Framework for Message-level
//! In-Network Computing"), sans I/O: the abstractions of §III-A, the multi-path selection of
//! §III-B and the JCT monitoring of Fig. 6 / Fig. 7, with time passed in.
//!
//! - [`api`]: the APIs and wrappers of Table II (init, send, recv, write, read, handle,
//!   reg_comm_func, reg_mem_func, reg_ts_func, reg_app_func).
//! - [`rdma`]: `send`/`recv` of a context over pisa's RoCEv2 endpoint (RC SEND/RECV), and a
//!   responder's serve step.
//! - [`hw`]: hardware models as graphs of devices and links; link bandwidth, message rate and
//!   latency are measured at init by [`hw::HardwareModel::profile`] through a [`hw::LinkProbe`].
//! - [`path`]: the communication path: a requester role, a responder device, the logical link
//!   sequence (mapped onto physical links by the model), data size per link, estimated time.
//! - [`app`]: the application abstraction read from YAML (request types, dependency
//!   NONE/ADDR/MSG, candidate paths, sizes, compute times) with named errors.
//! - [`select`]: path-selection policies: LEO's heuristic with the communication toll, the
//!   greedy baselines and fixed paths; [`lp`]: the k-step MILP of eqs. 1–4.
//! - [`queues`]: the linearised queue model of eqs. 1–2 (the LP's state and the oracle the
//!   tests check against).
//! - [`sim`]: the KVS experiment of §V on the queue model of a testbed whose links can slow
//!   down mid-run.
//! - [`jct`]: the timestamps of Fig. 6 and the 4-byte response header of Fig. 7.
//! - `error`: [`LeoError`].

pub mod api;
pub mod app;
pub mod error;
pub mod hw;
pub mod jct;
pub mod lp;
pub mod path;
pub mod queues;
pub mod rdma;
pub mod select;
pub mod sim;

pub use app::{AppSpec, Dependency, RequestType};
pub use error::LeoError;
pub use hw::{DeviceKind, HardwareModel, LinkProbe, LinkProfile};
pub use path::{CommPath, PathKind};
