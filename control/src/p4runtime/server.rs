//! The P4Runtime gRPC server (`pisa run --p4runtime ADDR`): tonic on a small tokio runtime of
//! its own thread, answering on a running switch's [`SwitchHandle`] like the control socket
//! ([`crate::server`]) does.
//!
//! - StreamChannel: arbitration ([`super::arbitration`]; the primary gets status OK, backups
//!   ALREADY_EXISTS, or NOT_FOUND while there is no primary; every controller hears when the
//!   primary changes), packet-out from the primary onto the CPU port, packet-in to the primary.
//! - SetForwardingPipelineConfig: the device config is the P4 program's source, which pisa
//!   compiles; a P4Info sent with it must name the same objects with the same ids as the
//!   P4Info pisa makes of it. VERIFY checks; VERIFY_AND_SAVE keeps it for COMMIT;
//!   VERIFY_AND_COMMIT and COMMIT start the new program with empty state;
//!   RECONCILE_AND_COMMIT keeps the state (an unchanged program keeps everything; a changed
//!   one gets the entries and default actions of its tables that still exist, or the request
//!   fails and nothing changes).
//! - Write (CONTINUE_ON_ERROR batches; per-update errors as `p4.v1.Error` details of a
//!   `google.rpc.Status`, gRPC code UNKNOWN) and Read (one response with every entity).
//! - Capabilities.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::Duration;

use dataplane::switch::SwitchHandle;
use dataplane::{FrameBatch, Nanos, Port};
use pipeline::switch::Switch;
use prost::Message;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Code, Request, Response, Status, Streaming};

use super::arbitration::Arbitration;
use super::codec::P4Error;
use super::device::{self, Op, Query};
use super::p4info::{self, P4Program};
use super::packet_io;
use super::proto::google::rpc;
use super::proto::p4::v1 as p4v1;
use super::proto::p4::v1::p4_runtime_server::{P4Runtime, P4RuntimeServer};
use super::request;
use super::schema::Schema;

/// How long one request may wait for the switch's thread.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// The P4Runtime version the server reports.
pub const API_VERSION: &str = "1.3.0";

/// The server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot start the P4Runtime server's runtime: {0}")]
    Runtime(std::io::Error),
}

/// The program a switch runs, as P4Runtime sees it.
#[derive(Debug)]
pub struct Pipeline {
    pub program: P4Program,
    pub schema: Schema,
    /// The device config it came from (the P4 source).
    pub device_config: Vec<u8>,
    pub cookie: Option<u64>,
}

impl Pipeline {
    pub fn new(program: P4Program, device_config: Vec<u8>, cookie: Option<u64>) -> Pipeline {
        let schema = Schema::new(&program.p4info);
        Pipeline {
            program,
            schema,
            device_config,
            cookie,
        }
    }
}

/// What the server needs besides the switch.
pub struct ServerConfig {
    /// The device id requests must name.
    pub device_id: u64,
    /// How device configs (P4 source) are compiled.
    pub compile: p4::compile::CompileOptions,
    /// The controller's end of the switch's CPU port (packet-out in, packet-in out).
    pub cpu: Option<Box<dyn Port>>,
}

type StreamTx = mpsc::Sender<Result<p4v1::StreamMessageResponse, Status>>;

struct Shared {
    device_id: u64,
    handle: SwitchHandle,
    compile: p4::compile::CompileOptions,
    pipeline: RwLock<Arc<Pipeline>>,
    saved: Mutex<Option<Arc<Pipeline>>>,
    arb: Mutex<(Arbitration, Vec<(u64, StreamTx)>)>,
    next_stream: AtomicU64,
    cpu: Option<Mutex<Box<dyn Port>>>,
    stop: AtomicBool,
    /// Digests the controller asked for (DigestEntry), by digest id.
    digests: Mutex<std::collections::BTreeMap<u32, p4v1::digest_entry::Config>>,
    next_list: AtomicU64,
}

/// A running P4Runtime server; dropping it stops it.
pub struct P4RuntimeServerHandle {
    addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    pump: Option<JoinHandle<()>>,
    digests: Option<JoinHandle<()>>,
    shared: Arc<Shared>,
}

impl P4RuntimeServerHandle {
    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for P4RuntimeServerHandle {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Some(t) = self.pump.take() {
            let _ = t.join();
        }
        if let Some(t) = self.digests.take() {
            let _ = t.join();
        }
    }
}

/// Starts serving P4Runtime on `addr` for the switch behind `handle`, which runs `pipeline`.
pub fn start(
    addr: SocketAddr,
    handle: SwitchHandle,
    pipeline: Pipeline,
    cfg: ServerConfig,
) -> Result<P4RuntimeServerHandle, StartError> {
    let listener =
        std::net::TcpListener::bind(addr).map_err(|source| StartError::Bind { addr, source })?;
    let local = listener
        .local_addr()
        .map_err(|source| StartError::Bind { addr, source })?;
    listener
        .set_nonblocking(true)
        .map_err(|source| StartError::Bind { addr, source })?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("p4runtime")
        .enable_all()
        .build()
        .map_err(StartError::Runtime)?;
    let shared = Arc::new(Shared {
        device_id: cfg.device_id,
        handle,
        compile: cfg.compile,
        pipeline: RwLock::new(Arc::new(pipeline)),
        saved: Mutex::new(None),
        arb: Mutex::new((Arbitration::default(), Vec::new())),
        next_stream: AtomicU64::new(1),
        cpu: cfg.cpu.map(Mutex::new),
        stop: AtomicBool::new(false),
        digests: Mutex::new(Default::default()),
        next_list: AtomicU64::new(1),
    });
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let svc = Service {
        shared: shared.clone(),
    };
    let thread = std::thread::Builder::new()
        .name("p4runtime".into())
        .spawn(move || {
            rt.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(listener) {
                    Ok(l) => l,
                    Err(e) => {
                        tracing::error!(error = %e, "P4Runtime listener");
                        return;
                    }
                };
                let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
                let r = tonic::transport::Server::builder()
                    .add_service(P4RuntimeServer::new(svc).max_decoding_message_size(64 << 20))
                    .serve_with_incoming_shutdown(incoming, async {
                        let _ = rx.await;
                    })
                    .await;
                if let Err(e) = r {
                    tracing::error!(error = %e, "P4Runtime server stopped");
                }
            });
        })
        .map_err(StartError::Runtime)?;
    let pump = match shared.cpu.is_some() {
        true => {
            let s = shared.clone();
            Some(
                std::thread::Builder::new()
                    .name("p4runtime-cpu".into())
                    .spawn(move || packet_in_pump(&s))
                    .map_err(StartError::Runtime)?,
            )
        }
        false => None,
    };
    let s = shared.clone();
    let digests = std::thread::Builder::new()
        .name("p4runtime-digest".into())
        .spawn(move || digest_pump(&s))
        .map_err(StartError::Runtime)?;
    Ok(P4RuntimeServerHandle {
        addr: local,
        shutdown: Some(tx),
        thread: Some(thread),
        pump,
        digests: Some(digests),
        shared,
    })
}

/// Moves frames from the CPU port to the primary controller as packet-ins.
fn packet_in_pump(s: &Shared) {
    let Some(cpu) = &s.cpu else { return };
    let mut batch = FrameBatch::new(32);
    while !s.stop.load(Ordering::Acquire) {
        let frames: Vec<Vec<u8>> = {
            let Ok(mut port) = cpu.lock() else { return };
            match port.wait_readable(Duration::from_millis(5)) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(_) => {
                    drop(port);
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                }
            }
            batch.clear();
            if port.recv_batch(&mut batch, Nanos(0)).is_err() {
                continue;
            }
            batch.iter().map(|f| f.data.clone()).collect()
        };
        if frames.is_empty() {
            continue;
        }
        let pipeline = s.pipeline.read().map(|p| p.clone());
        let Ok(pipeline) = pipeline else { return };
        let target = {
            let Ok(arb) = s.arb.lock() else { return };
            arb.0.primary_stream().and_then(|id| {
                arb.1
                    .iter()
                    .find(|(sid, _)| *sid == id)
                    .map(|x| x.1.clone())
            })
        };
        let Some(tx) = target else { continue };
        for f in frames {
            let Some((payload, metadata)) =
                packet_io::packet_in(pipeline.schema.packet_in.as_ref(), &f)
            else {
                tracing::debug!(len = f.len(), "CPU frame shorter than the packet_in header");
                continue;
            };
            let msg = p4v1::StreamMessageResponse {
                update: Some(p4v1::stream_message_response::Update::Packet(
                    p4v1::PacketIn { payload, metadata },
                )),
            };
            // A slow controller loses packet-ins rather than stalling the CPU port.
            let _ = tx.try_send(Ok(msg));
        }
    }
}

/// Entities per ReadResponse.
const READ_CHUNK: usize = 1000;

/// How often the switch's digest queue is drained.
const DIGEST_POLL: Duration = Duration::from_millis(10);

/// The primary's stream, if a controller is primary.
fn primary_tx(s: &Shared) -> Option<StreamTx> {
    let arb = s.arb.lock().ok()?;
    let id = arb.0.primary_stream()?;
    arb.1
        .iter()
        .find(|(sid, _)| *sid == id)
        .map(|x| x.1.clone())
}

/// Moves the switch's digests to the primary controller as digest lists, for the digests the
/// controller configured (others are drained and dropped, as the switch's queue is bounded).
fn digest_pump(s: &Shared) {
    use p4v1::p4_data::Data;
    while !s.stop.load(Ordering::Acquire) {
        std::thread::sleep(DIGEST_POLL);
        let configured = match s.digests.lock() {
            Ok(d) => d.clone(),
            Err(_) => return,
        };
        // Unconfigured digests stay in the switch's bounded queue (counted when it is full),
        // as without a P4Runtime server.
        if configured.is_empty() {
            continue;
        }
        let Ok(msgs) = s.handle.each(CALL_TIMEOUT, |sw, _| sw.digest_drain()) else {
            continue;
        };
        let Ok(pipeline) = s.pipeline.read().map(|p| p.clone()) else {
            return;
        };
        let mut by_id: std::collections::BTreeMap<u32, Vec<p4v1::P4Data>> = Default::default();
        for m in msgs.into_iter().flatten() {
            let Some(id) = pipeline.schema.digest_id(&m.name) else {
                continue;
            };
            if !configured.contains_key(&id) {
                continue;
            }
            let members = m
                .values
                .iter()
                .map(|v| p4v1::P4Data {
                    data: Some(Data::Bitstring(super::codec::from_value(*v))),
                })
                .collect();
            by_id.entry(id).or_default().push(p4v1::P4Data {
                data: Some(Data::Struct(p4v1::P4StructLike { members })),
            });
        }
        let Some(tx) = primary_tx(s) else { continue };
        for (id, data) in by_id {
            let max = configured[&id].max_list_size.max(1) as usize;
            for chunk in data.chunks(max) {
                let list = p4v1::DigestList {
                    digest_id: id,
                    list_id: s.next_list.fetch_add(1, Ordering::Relaxed),
                    data: chunk.to_vec(),
                    timestamp: std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_nanos() as i64),
                };
                let _ = tx.try_send(Ok(p4v1::StreamMessageResponse {
                    update: Some(p4v1::stream_message_response::Update::Digest(list)),
                }));
            }
        }
    }
}

fn u128_of(e: &Option<p4v1::Uint128>) -> Option<u128> {
    e.as_ref()
        .map(|e| u128::from(e.high) << 64 | u128::from(e.low))
}

fn uint128(v: u128) -> p4v1::Uint128 {
    p4v1::Uint128 {
        high: (v >> 64) as u64,
        low: v as u64,
    }
}

fn status(e: P4Error) -> Status {
    Status::new(e.code, e.message)
}

fn any<M: Message>(type_name: &str, m: &M) -> prost_types::Any {
    prost_types::Any {
        type_url: format!("type.googleapis.com/{type_name}"),
        value: m.encode_to_vec(),
    }
}

/// The gRPC status of a batch with failed updates: UNKNOWN, with one `p4.v1.Error` per update
/// (OK for those that were applied) in a `google.rpc.Status`.
pub fn batch_status(results: &[Result<(), P4Error>]) -> Status {
    let failed = results.iter().filter(|r| r.is_err()).count();
    let details: Vec<prost_types::Any> = results
        .iter()
        .map(|r| {
            let e = match r {
                Ok(()) => p4v1::Error::default(),
                Err(e) => p4v1::Error {
                    canonical_code: e.code as i32,
                    message: e.message.clone(),
                    ..Default::default()
                },
            };
            any("p4.v1.Error", &e)
        })
        .collect();
    let message = format!("{failed} of {} update(s) failed", results.len());
    let st = rpc::Status {
        code: Code::Unknown as i32,
        message: message.clone(),
        details,
    };
    Status::with_details(Code::Unknown, message, st.encode_to_vec().into())
}

struct Service {
    shared: Arc<Shared>,
}

impl Service {
    fn check_device(&self, id: u64) -> Result<(), Status> {
        if id != self.shared.device_id {
            return Err(Status::not_found(format!(
                "no device with id {id} (this switch is device {})",
                self.shared.device_id
            )));
        }
        Ok(())
    }

    fn check_role(role: &str) -> Result<(), Status> {
        if !role.is_empty() {
            return Err(Status::unimplemented(format!(
                "role `{role}`: pisa serves the default role only"
            )));
        }
        Ok(())
    }

    fn check_primary(&self, election: &Option<p4v1::Uint128>) -> Result<(), Status> {
        let arb = self
            .shared
            .arb
            .lock()
            .map_err(|_| Status::internal("arbitration state poisoned"))?;
        if !arb.0.is_primary(u128_of(election)) {
            return Err(Status::permission_denied(match (u128_of(election), arb.0.primary()) {
                (None, _) => "the request has no election id: only the primary may write".to_string(),
                (Some(e), Some(p)) => format!("election id {e} is not the primary's ({p})"),
                (Some(e), None) => format!("election id {e}: no controller is primary (open a StreamChannel and arbitrate first)"),
            }));
        }
        Ok(())
    }

    fn pipeline(&self) -> Result<Arc<Pipeline>, Status> {
        self.shared
            .pipeline
            .read()
            .map(|p| p.clone())
            .map_err(|_| Status::internal("pipeline state poisoned"))
    }

    /// The arbitration answer for a controller with `election`.
    fn arbitration_msg(
        &self,
        arb: &Arbitration,
        election: Option<u128>,
    ) -> p4v1::StreamMessageResponse {
        let primary = arb.primary();
        let (code, message) = match primary {
            Some(p) if Some(p) == election => (Code::Ok, "you are the primary"),
            Some(_) => (
                Code::AlreadyExists,
                "a controller with a higher election id is primary",
            ),
            None => (Code::NotFound, "no controller is primary"),
        };
        p4v1::StreamMessageResponse {
            update: Some(p4v1::stream_message_response::Update::Arbitration(
                p4v1::MasterArbitrationUpdate {
                    device_id: self.shared.device_id,
                    role: None,
                    election_id: primary.or(election).map(uint128),
                    status: Some(rpc::Status {
                        code: code as i32,
                        message: message.into(),
                        details: Vec::new(),
                    }),
                },
            )),
        }
    }

    /// Handles one message of stream `sid`.
    fn on_stream_message(
        &self,
        sid: u64,
        tx: &StreamTx,
        msg: p4v1::StreamMessageRequest,
    ) -> Result<(), Status> {
        use p4v1::stream_message_request::Update;
        match msg.update {
            Some(Update::Arbitration(a)) => {
                self.check_device(a.device_id)?;
                if let Some(r) = &a.role {
                    Self::check_role(&r.name)?;
                }
                let election = u128_of(&a.election_id);
                let mut g = self
                    .shared
                    .arb
                    .lock()
                    .map_err(|_| Status::internal("arbitration state poisoned"))?;
                let change = g.0.update(sid, election).map_err(status)?;
                if !g.1.iter().any(|(s, _)| *s == sid) {
                    g.1.push((sid, tx.clone()));
                }
                let (arb, streams) = &*g;
                for (s, t) in streams {
                    if *s == sid || change.before != change.after {
                        let e = arb.election_of(*s).flatten();
                        let _ = t.try_send(Ok(self.arbitration_msg(arb, e)));
                    }
                }
                Ok(())
            }
            Some(Update::Packet(p)) => {
                let arb_ok = {
                    let g = self
                        .shared
                        .arb
                        .lock()
                        .map_err(|_| Status::internal("arbitration state poisoned"))?;
                    match g.0.election_of(sid) {
                        None => return Err(Status::failed_precondition(
                            "the first message on a StreamChannel must be an arbitration update",
                        )),
                        Some(e) => g.0.is_primary(e),
                    }
                };
                let r = if !arb_ok {
                    Err(P4Error::new(
                        Code::PermissionDenied,
                        "only the primary may send packet-outs",
                    ))
                } else {
                    self.packet_out(&p)
                };
                if let Err(e) = r {
                    let err = p4v1::StreamError {
                        canonical_code: e.code as i32,
                        message: e.message,
                        details: Some(p4v1::stream_error::Details::PacketOut(
                            p4v1::PacketOutError {
                                packet_out: Some(p),
                            },
                        )),
                        ..Default::default()
                    };
                    let _ = tx.try_send(Ok(p4v1::StreamMessageResponse {
                        update: Some(p4v1::stream_message_response::Update::Error(err)),
                    }));
                }
                Ok(())
            }
            // Lists are not redelivered, so an ack needs no bookkeeping.
            Some(Update::DigestAck(_)) => Ok(()),
            Some(Update::Other(_)) => {
                let err = p4v1::StreamError {
                    canonical_code: Code::Unimplemented as i32,
                    message: "architecture-specific stream messages are not served".into(),
                    ..Default::default()
                };
                let _ = tx.try_send(Ok(p4v1::StreamMessageResponse {
                    update: Some(p4v1::stream_message_response::Update::Error(err)),
                }));
                Ok(())
            }
            None => Err(Status::invalid_argument("empty stream message")),
        }
    }

    fn packet_out(&self, p: &p4v1::PacketOut) -> Result<(), P4Error> {
        let pipeline = self
            .pipeline()
            .map_err(|e| P4Error::new(e.code(), e.message()))?;
        let frame = packet_io::packet_out_frame(
            pipeline.schema.packet_out.as_ref(),
            &p.payload,
            &p.metadata,
        )?;
        let Some(cpu) = &self.shared.cpu else {
            return Err(P4Error::new(
                Code::FailedPrecondition,
                "this switch has no CPU port for packet I/O",
            ));
        };
        let mut port = cpu
            .lock()
            .map_err(|_| P4Error::new(Code::Internal, "CPU port poisoned"))?;
        let mut batch = FrameBatch::new(1);
        batch.push(&frame, Nanos(0));
        match port.send_batch(&mut batch, Nanos(0)) {
            Ok(1) => Ok(()),
            Ok(_) => Err(P4Error::new(
                Code::ResourceExhausted,
                "the CPU port dropped the packet-out",
            )),
            Err(e) => Err(P4Error::new(Code::Unavailable, format!("CPU port: {e}"))),
        }
    }

    /// A DigestEntry write: the digest's list configuration, kept by the server.
    fn digest_write(
        &self,
        schema: &Schema,
        kind: i32,
        d: &p4v1::DigestEntry,
    ) -> Result<(), P4Error> {
        use p4v1::update::Type as U;
        if !schema.digests.contains_key(&d.digest_id) {
            return Err(P4Error::not_found(format!(
                "no digest with id {:#x}",
                d.digest_id
            )));
        }
        let mut cfg = self
            .shared
            .digests
            .lock()
            .map_err(|_| P4Error::new(Code::Internal, "digest state poisoned"))?;
        let exists = cfg.contains_key(&d.digest_id);
        match U::try_from(kind).unwrap_or(U::Unspecified) {
            U::Insert if exists => Err(P4Error::new(
                Code::AlreadyExists,
                format!("digest {:#x} is already configured", d.digest_id),
            )),
            U::Modify if !exists => Err(P4Error::not_found(format!(
                "digest {:#x} is not configured",
                d.digest_id
            ))),
            U::Insert | U::Modify => {
                let c = d
                    .config
                    .ok_or_else(|| P4Error::invalid("digest entry without a config"))?;
                if c.max_list_size < 0 || c.max_timeout_ns < 0 || c.ack_timeout_ns < 0 {
                    return Err(P4Error::invalid(
                        "digest config values must not be negative",
                    ));
                }
                cfg.insert(d.digest_id, c);
                Ok(())
            }
            U::Delete if !exists => Err(P4Error::not_found(format!(
                "digest {:#x} is not configured",
                d.digest_id
            ))),
            U::Delete => {
                cfg.remove(&d.digest_id);
                Ok(())
            }
            U::Unspecified => Err(P4Error::invalid("update type is UNSPECIFIED")),
        }
    }

    /// Digest configurations (digest id 0: all).
    fn digest_read(
        &self,
        schema: &Schema,
        d: &p4v1::DigestEntry,
    ) -> Result<Vec<p4v1::Entity>, Status> {
        if d.digest_id != 0 && !schema.digests.contains_key(&d.digest_id) {
            return Err(Status::not_found(format!(
                "no digest with id {:#x}",
                d.digest_id
            )));
        }
        let cfg = self
            .shared
            .digests
            .lock()
            .map_err(|_| Status::internal("digest state poisoned"))?;
        Ok(cfg
            .iter()
            .filter(|(id, _)| d.digest_id == 0 || **id == d.digest_id)
            .map(|(id, c)| p4v1::Entity {
                entity: Some(p4v1::entity::Entity::DigestEntry(p4v1::DigestEntry {
                    digest_id: *id,
                    config: Some(*c),
                })),
            })
            .collect())
    }

    fn leave(&self, sid: u64) {
        let Ok(mut g) = self.shared.arb.lock() else {
            return;
        };
        let change = g.0.leave(sid);
        g.1.retain(|(s, _)| *s != sid);
        if change.before != change.after {
            let (arb, streams) = &*g;
            for (s, t) in streams {
                let e = arb.election_of(*s).flatten();
                let _ = t.try_send(Ok(self.arbitration_msg(arb, e)));
            }
        }
    }
}

/// Runs `f` on every switch instance on its thread (outside the async runtime's workers).
async fn on_switch<R: Send + 'static>(
    h: SwitchHandle,
    f: impl Fn(&mut Switch, u8) -> R + Send + Sync + 'static,
) -> Result<Vec<R>, Status> {
    tokio::task::spawn_blocking(move || h.each(CALL_TIMEOUT, f))
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map_err(|e| Status::unavailable(format!("switch: {e}")))
}

/// Compiles a device config and checks the P4Info sent with it.
fn verify(
    compile: &p4::compile::CompileOptions,
    cfg: &p4v1::ForwardingPipelineConfig,
) -> Result<Pipeline, Status> {
    let text = std::str::from_utf8(&cfg.p4_device_config).map_err(|_| {
        Status::invalid_argument(
            "p4_device_config must be the P4 program's source (UTF-8 text); pisa compiles it",
        )
    })?;
    if text.trim().is_empty() {
        return Err(Status::invalid_argument(
            "p4_device_config is empty: send the P4 program's source",
        ));
    }
    let program = p4info::compile_source("device_config.p4", text, compile).map_err(|d| {
        Status::invalid_argument(format!("the device config does not compile:\n{d}"))
    })?;
    if let Some(given) = &cfg.p4info {
        check_p4info(given, &program.p4info).map_err(Status::invalid_argument)?;
    }
    Ok(Pipeline::new(
        program,
        cfg.p4_device_config.clone(),
        cfg.cookie.as_ref().map(|c| c.cookie),
    ))
}

/// A P4Info sent by a controller must name the objects pisa's has with the same ids.
fn check_p4info(
    given: &super::proto::p4::config::v1::P4Info,
    ours: &super::proto::p4::config::v1::P4Info,
) -> Result<(), String> {
    fn ids<'a>(
        it: impl Iterator<Item = &'a Option<super::proto::p4::config::v1::Preamble>>,
    ) -> Vec<(u32, String)> {
        let mut v: Vec<(u32, String)> = it.flatten().map(|p| (p.id, p.name.clone())).collect();
        v.sort();
        v
    }
    let pairs = [
        (
            "tables",
            ids(given.tables.iter().map(|t| &t.preamble)),
            ids(ours.tables.iter().map(|t| &t.preamble)),
        ),
        (
            "actions",
            ids(given.actions.iter().map(|t| &t.preamble)),
            ids(ours.actions.iter().map(|t| &t.preamble)),
        ),
        (
            "counters",
            ids(given.counters.iter().map(|t| &t.preamble)),
            ids(ours.counters.iter().map(|t| &t.preamble)),
        ),
        (
            "direct counters",
            ids(given.direct_counters.iter().map(|t| &t.preamble)),
            ids(ours.direct_counters.iter().map(|t| &t.preamble)),
        ),
        (
            "registers",
            ids(given.registers.iter().map(|t| &t.preamble)),
            ids(ours.registers.iter().map(|t| &t.preamble)),
        ),
    ];
    for (what, g, o) in pairs {
        if g != o {
            let diff = g
                .iter()
                .find(|x| !o.contains(x))
                .or_else(|| o.iter().find(|x| !g.contains(x)));
            return Err(format!(
                "the P4Info's {what} differ from the program's (first difference: {diff:?}); \
                 send the P4Info `pisa p4info` makes of this program"
            ));
        }
    }
    Ok(())
}

/// Table entries and default actions of `old` carried into `new` (RECONCILE_AND_COMMIT).
fn migrate(old: &Switch, new: &mut Switch) -> Result<(), String> {
    use pipeline::api::PipeSel;
    let prog = new.program().clone();
    for pl in &prog.pipelines {
        for t in &pl.tables {
            if t.entries_const {
                continue;
            }
            let Ok(entries) = old.table_entries(PipeSel::All, &t.name) else {
                continue;
            };
            for e in entries {
                new.table_add_entry(PipeSel::All, &t.name, &e)
                    .map_err(|err| {
                        format!(
                            "table `{}`: an entry does not fit the new program: {err}",
                            t.name
                        )
                    })?;
            }
            if !t.default_action_const {
                if let Ok((a, params)) = old.table_get_default(PipeSel::All, &t.name) {
                    let p: Vec<(&str, u128)> =
                        params.iter().map(|(n, v)| (n.as_str(), *v)).collect();
                    new.table_set_default(PipeSel::All, &t.name, &a, &p)
                        .map_err(|err| format!("table `{}`: the default action does not fit the new program: {err}", t.name))?;
                }
            }
        }
    }
    Ok(())
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

#[tonic::async_trait]
impl P4Runtime for Service {
    async fn write(
        &self,
        req: Request<p4v1::WriteRequest>,
    ) -> Result<Response<p4v1::WriteResponse>, Status> {
        use p4v1::write_request::Atomicity;
        let req = req.into_inner();
        self.check_device(req.device_id)?;
        Self::check_role(&req.role)?;
        self.check_primary(&req.election_id)?;
        if req.atomicity != Atomicity::ContinueOnError as i32 {
            return Err(Status::unimplemented(
                "only CONTINUE_ON_ERROR batches are supported",
            ));
        }
        let pipeline = self.pipeline()?;
        // Each update: answered here (digest configurations live in the server, refusals of
        // the checks), or an operation for the switch.
        enum Step {
            Done(Result<(), P4Error>),
            Switch(Op),
        }
        let steps: Vec<Step> = req
            .updates
            .iter()
            .map(
                |u| match u.entity.as_ref().and_then(|e| e.entity.as_ref()) {
                    Some(p4v1::entity::Entity::DigestEntry(d)) => {
                        Step::Done(self.digest_write(&pipeline.schema, u.r#type, d))
                    }
                    _ => match request::update_op(&pipeline.schema, u) {
                        Ok(op) => Step::Switch(op),
                        Err(e) => Step::Done(Err(e)),
                    },
                },
            )
            .collect();
        let ops: Arc<Vec<Op>> = Arc::new(
            steps
                .iter()
                .filter_map(|s| match s {
                    Step::Switch(op) => Some(op.clone()),
                    Step::Done(_) => None,
                })
                .collect(),
        );
        let run = ops.clone();
        let per_instance = on_switch(self.shared.handle.clone(), move |sw, _| {
            run.iter()
                .map(|op| device::apply(sw, op))
                .collect::<Vec<_>>()
        })
        .await?;
        let mut applied = per_instance
            .into_iter()
            .next()
            .ok_or_else(|| Status::unavailable("the switch has no running instance"))?
            .into_iter();
        let results: Vec<Result<(), P4Error>> = steps
            .into_iter()
            .map(|s| match s {
                Step::Done(r) => r,
                Step::Switch(_) => applied.next().unwrap_or_else(|| {
                    Err(P4Error::new(Code::Internal, "no answer from the switch"))
                }),
            })
            .collect();
        for (u, r) in req.updates.iter().zip(&results) {
            match r {
                Ok(()) => tracing::debug!(kind = u.r#type, "p4runtime write"),
                Err(e) => tracing::info!(error = %e, "p4runtime write refused"),
            }
        }
        if results.iter().all(|r| r.is_ok()) {
            Ok(Response::new(p4v1::WriteResponse {}))
        } else {
            Err(batch_status(&results))
        }
    }

    type ReadStream = BoxStream<p4v1::ReadResponse>;

    async fn read(
        &self,
        req: Request<p4v1::ReadRequest>,
    ) -> Result<Response<Self::ReadStream>, Status> {
        let req = req.into_inner();
        self.check_device(req.device_id)?;
        Self::check_role(&req.role)?;
        let pipeline = self.pipeline()?;
        let mut queries: Vec<Query> = Vec::new();
        let mut local = Vec::new();
        for e in &req.entities {
            if let Some(p4v1::entity::Entity::DigestEntry(d)) = &e.entity {
                local.extend(self.digest_read(&pipeline.schema, d)?);
                continue;
            }
            queries.extend(request::read_query(&pipeline.schema, e).map_err(status)?);
        }
        let p = pipeline.clone();
        let answers = on_switch(self.shared.handle.clone(), move |sw, owns| {
            let mut out = Vec::new();
            for q in &queries {
                out.extend(device::read(sw, owns, &p.schema, q)?);
            }
            Ok::<_, P4Error>(out)
        })
        .await?;
        let mut it = answers.into_iter();
        let mut entities = it.next().unwrap_or(Ok(Vec::new())).map_err(status)?;
        for other in it {
            device::merge_counts(&mut entities, &other.map_err(status)?);
        }
        entities.extend(local);
        // Large reads go out in several responses, each well under gRPC's default 4 MiB.
        let mut responses: Vec<Result<p4v1::ReadResponse, Status>> = entities
            .chunks(READ_CHUNK)
            .map(|c| {
                Ok(p4v1::ReadResponse {
                    entities: c.to_vec(),
                })
            })
            .collect();
        if responses.is_empty() {
            responses.push(Ok(p4v1::ReadResponse::default()));
        }
        Ok(Response::new(Box::pin(tokio_stream::iter(responses))))
    }

    async fn set_forwarding_pipeline_config(
        &self,
        req: Request<p4v1::SetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4v1::SetForwardingPipelineConfigResponse>, Status> {
        use p4v1::set_forwarding_pipeline_config_request::Action;
        let req = req.into_inner();
        self.check_device(req.device_id)?;
        Self::check_role(&req.role)?;
        self.check_primary(&req.election_id)?;
        let action = Action::try_from(req.action).unwrap_or(Action::Unspecified);
        let compile = self.shared.compile.clone();
        let config = req.config.clone();
        let verified = || -> Result<Pipeline, Status> {
            let cfg = config
                .as_ref()
                .ok_or_else(|| Status::invalid_argument("the request has no config"))?;
            verify(&compile, cfg)
        };
        let (next, keep_state) = match action {
            Action::Verify => {
                tokio::task::block_in_place(verified)?;
                return Ok(Response::new(p4v1::SetForwardingPipelineConfigResponse {}));
            }
            Action::VerifyAndSave => {
                let p = tokio::task::block_in_place(verified)?;
                *self
                    .shared
                    .saved
                    .lock()
                    .map_err(|_| Status::internal("poisoned"))? = Some(Arc::new(p));
                return Ok(Response::new(p4v1::SetForwardingPipelineConfigResponse {}));
            }
            Action::VerifyAndCommit => (Arc::new(tokio::task::block_in_place(verified)?), false),
            Action::ReconcileAndCommit => (Arc::new(tokio::task::block_in_place(verified)?), true),
            Action::Commit => {
                let saved = self
                    .shared
                    .saved
                    .lock()
                    .map_err(|_| Status::internal("poisoned"))?
                    .take();
                (
                    saved.ok_or_else(|| {
                        Status::failed_precondition(
                            "COMMIT without a config saved by VERIFY_AND_SAVE",
                        )
                    })?,
                    false,
                )
            }
            Action::Unspecified => {
                return Err(Status::invalid_argument(
                    "the pipeline config action is UNSPECIFIED",
                ))
            }
        };
        let current = self.pipeline()?;
        let same = current.program.program == next.program.program;
        if !(keep_state && same) {
            let prog = Arc::new(next.program.program.clone());
            let results = on_switch(self.shared.handle.clone(), move |sw, _| {
                let mut fresh = Switch::new(prog.clone(), sw.config().clone())
                    .map_err(|e| format!("cannot build the switch: {e}"))?;
                if keep_state {
                    migrate(sw, &mut fresh)?;
                }
                *sw = fresh;
                Ok::<(), String>(())
            })
            .await?;
            for r in results {
                r.map_err(Status::failed_precondition)?;
            }
        }
        *self
            .shared
            .pipeline
            .write()
            .map_err(|_| Status::internal("poisoned"))? = next;
        tracing::info!(
            ?action,
            kept_state = keep_state,
            "p4runtime pipeline config committed"
        );
        Ok(Response::new(p4v1::SetForwardingPipelineConfigResponse {}))
    }

    async fn get_forwarding_pipeline_config(
        &self,
        req: Request<p4v1::GetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4v1::GetForwardingPipelineConfigResponse>, Status> {
        use p4v1::get_forwarding_pipeline_config_request::ResponseType as R;
        let req = req.into_inner();
        self.check_device(req.device_id)?;
        let p = self.pipeline()?;
        let rt = R::try_from(req.response_type).unwrap_or(R::All);
        let cookie = p
            .cookie
            .map(|c| p4v1::forwarding_pipeline_config::Cookie { cookie: c });
        let with_info = matches!(rt, R::All | R::P4infoAndCookie);
        let with_dev = matches!(rt, R::All | R::DeviceConfigAndCookie);
        Ok(Response::new(p4v1::GetForwardingPipelineConfigResponse {
            config: Some(p4v1::ForwardingPipelineConfig {
                p4info: with_info.then(|| p.program.p4info.clone()),
                p4_device_config: if with_dev {
                    p.device_config.clone()
                } else {
                    Vec::new()
                },
                cookie,
            }),
        }))
    }

    type StreamChannelStream = BoxStream<p4v1::StreamMessageResponse>;

    async fn stream_channel(
        &self,
        req: Request<Streaming<p4v1::StreamMessageRequest>>,
    ) -> Result<Response<Self::StreamChannelStream>, Status> {
        let mut inbound = req.into_inner();
        let (tx, rx) = mpsc::channel(1024);
        let sid = self.shared.next_stream.fetch_add(1, Ordering::Relaxed);
        let me = Service {
            shared: self.shared.clone(),
        };
        tokio::spawn(async move {
            while let Some(msg) = inbound.next().await {
                let msg = match msg {
                    Ok(m) => m,
                    Err(_) => break,
                };
                if let Err(st) = me.on_stream_message(sid, &tx, msg) {
                    let _ = tx.send(Err(st)).await;
                    break;
                }
            }
            me.leave(sid);
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn capabilities(
        &self,
        _req: Request<p4v1::CapabilitiesRequest>,
    ) -> Result<Response<p4v1::CapabilitiesResponse>, Status> {
        Ok(Response::new(p4v1::CapabilitiesResponse {
            p4runtime_api_version: API_VERSION.into(),
        }))
    }
}
