//! The P4Runtime gRPC server (`pisa run --p4runtime ADDR`): tonic on a small tokio runtime of
//! its own thread, answering on a running switch's [`SwitchHandle`] like the control socket
//! ([`crate::server`]) does.
//!
//! - StreamChannel: arbitration ([`super::arbitration`]; the primary gets status OK, backups
//!   ALREADY_EXISTS, or NOT_FOUND while there is no primary, each with the highest election id
//!   seen; every controller hears when the primary changes or goes away), packet-out from the primary onto the CPU port, packet-in to the primary.
//! - SetForwardingPipelineConfig: the device config is the P4 program's source, which pisa
//!   compiles; a P4Info sent with it must name the same objects with the same ids as the
//!   P4Info pisa makes of it. VERIFY checks; VERIFY_AND_SAVE keeps it for COMMIT, and until
//!   then Reads and Writes refer to the saved config and its state ([`stage`]), which COMMIT
//!   starts the new program with (COMMIT with a config is INVALID_ARGUMENT);
//!   VERIFY_AND_COMMIT starts the new program with empty state;
//!   RECONCILE_AND_COMMIT keeps the state (an unchanged program keeps everything; a changed
//!   one gets the multicast groups and clone sessions, and the members and groups of its
//!   action profiles, the entries and default actions of its tables and the members of its
//!   value sets that still exist — not the counter, meter and register cells — or the request
//!   fails with INVALID_ARGUMENT, the object and the reason, and nothing changes).
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
use dataplane::Port;
use pipeline::switch::Switch;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Code, Request, Response, Status, Streaming};

use super::arbitration::Arbitration;
use super::codec::P4Error;
use super::device::{self, Op, Query};
use super::p4info::P4Program;
use super::proto::p4::v1 as p4v1;
use super::proto::p4::v1::p4_runtime_server::{P4Runtime, P4RuntimeServer};
use super::request;
use super::schema::Schema;
pub use batch::batch_status;
use config::{migrate, verify};
use digests::digest_pump;
use stream::packet_in_pump;

mod batch;
mod config;
mod digests;
mod extras;
mod idle;
mod oneshot;
mod stage;
mod stream;
mod watch;
mod weights;

/// How long the server's own polls (digests, idle entries, watched ports) wait for the
/// switch's thread; they try again at the next poll.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// A write or a pipeline commit waits for the switch thread's answer however long its work
/// takes: a deadline would answer UNAVAILABLE ("not done") while the thread goes on to apply
/// it. A read waits as long: the thread answers it between two jobs, so behind a long write
/// it is served once the write is done, and sees the state before or after the whole batch
/// (it was UNAVAILABLE after 5 s). A stopped thread still answers at once (its channel
/// closes).
const UNTIL_ANSWERED: Duration = Duration::MAX;

/// A planned update: the switch operation and what it changes in the server's books.
struct Planned {
    op: Op,
    shot: Option<oneshot::Change>,
    weights: Option<weights::Change>,
    watched: Option<watch::Watched>,
}

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
    /// The clock the switch runs on (its frames' timestamps): idle timeouts are measured on it.
    pub clock: Arc<dyn dataplane::Clock>,
}

type StreamTx = mpsc::Sender<Result<p4v1::StreamMessageResponse, Status>>;

struct Shared {
    device_id: u64,
    handle: SwitchHandle,
    compile: p4::compile::CompileOptions,
    pipeline: RwLock<Arc<Pipeline>>,
    /// A config saved by VERIFY_AND_SAVE, with the switch its writes go to until COMMIT, and
    /// the extras and digest configurations written for it ([`stage`]).
    stage: Mutex<Option<stage::Stage>>,
    stage_extras: Mutex<extras::Extras>,
    stage_digests: Mutex<std::collections::BTreeMap<u32, p4v1::digest_entry::Config>>,
    arb: Mutex<(Arbitration, Vec<(u64, StreamTx)>)>,
    next_stream: AtomicU64,
    cpu: Option<Mutex<Box<dyn Port>>>,
    stop: AtomicBool,
    /// Digests the controller asked for (DigestEntry), by digest id.
    digests: Mutex<std::collections::BTreeMap<u32, p4v1::digest_entry::Config>>,
    next_list: AtomicU64,
    /// The switch's clock.
    clock: Arc<dyn dataplane::Clock>,
    /// Entries reported idle, with the last hit they had then (told again only after a
    /// later hit and another idle period).
    idle_told: Mutex<std::collections::HashMap<idle::EntryId, u64>>,
    /// What reads give back that the switch does not hold (entry and group metadata, clone
    /// sessions' class of service).
    extras: Mutex<extras::Extras>,
    /// Digest data sent and not yet acked.
    unacked: Mutex<digests::Unacked>,
}

/// A running P4Runtime server; dropping it stops it.
pub struct P4RuntimeServerHandle {
    addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    pump: Option<JoinHandle<()>>,
    digests: Option<JoinHandle<()>>,
    idle: Option<JoinHandle<()>>,
    watch: Option<JoinHandle<()>>,
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
        if let Some(t) = self.idle.take() {
            let _ = t.join();
        }
        if let Some(t) = self.watch.take() {
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
        stage: Mutex::new(None),
        stage_extras: Mutex::new(Default::default()),
        stage_digests: Mutex::new(Default::default()),
        arb: Mutex::new((Arbitration::default(), Vec::new())),
        next_stream: AtomicU64::new(1),
        cpu: cfg.cpu.map(Mutex::new),
        stop: AtomicBool::new(false),
        digests: Mutex::new(Default::default()),
        next_list: AtomicU64::new(1),
        clock: cfg.clock,
        idle_told: Mutex::new(Default::default()),
        extras: Mutex::new(Default::default()),
        unacked: Mutex::new(Default::default()),
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
    let s = shared.clone();
    let idle = std::thread::Builder::new()
        .name("p4runtime-idle".into())
        .spawn(move || idle::idle_pump(&s))
        .map_err(StartError::Runtime)?;
    let s = shared.clone();
    let watch = std::thread::Builder::new()
        .name("p4runtime-watch".into())
        .spawn(move || watch::watch_pump(&s))
        .map_err(StartError::Runtime)?;
    Ok(P4RuntimeServerHandle {
        addr: local,
        shutdown: Some(tx),
        thread: Some(thread),
        pump,
        digests: Some(digests),
        idle: Some(idle),
        watch: Some(watch),
        shared,
    })
}

/// Entities per ReadResponse.
const READ_CHUNK: usize = 1000;

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
    Status::new(e.code, p4::diag::bounded(&e.message).into_owned())
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

    /// An update checked against what the server keeps beside the switch, as the switch
    /// operation it is, with what it changes there when it is one-shot programming.
    /// A group write with watched members holds the members whose port is up, and comes
    /// back with the group as written ([`watch`]).
    fn plan(&self, staged: bool, s: &Schema, u: &p4v1::Update) -> Result<Planned, P4Error> {
        let mut x = self
            .extras_of(staged)
            .lock()
            .map_err(|_| P4Error::new(Code::Internal, "extras poisoned"))?;
        x.check(u)?;
        if let Some((op, change)) = x.shots.plan(s, u)? {
            return Ok(Planned {
                op,
                shot: Some(change),
                weights: None,
                watched: None,
            });
        }
        let op = request::update_op(s, u)?;
        let (op, weights) = match x.weights.plan(s, u, &op)? {
            Some((op, change)) => (op, change),
            None => (op, None),
        };
        let replicas = match &weights {
            Some(weights::Change::Set(_, w)) => w.replicas.clone(),
            _ => Vec::new(),
        };
        let mut watched = watch::watched_of(s, u, &replicas)?;
        let op = match &mut watched {
            Some(w) => watch::filter_op(&self.shared.handle, w, op),
            None => op,
        };
        Ok(Planned {
            op,
            shot: None,
            weights,
            watched,
        })
    }

    /// The server-side extras of the running config, or (`staged`) of the saved one.
    fn extras_of(&self, staged: bool) -> &Mutex<extras::Extras> {
        match staged {
            true => &self.shared.stage_extras,
            false => &self.shared.extras,
        }
    }

    /// The digest configurations of the running config, or (`staged`) of the saved one.
    fn digests_of(
        &self,
        staged: bool,
    ) -> &Mutex<std::collections::BTreeMap<u32, p4v1::digest_entry::Config>> {
        match staged {
            true => &self.shared.stage_digests,
            false => &self.shared.digests,
        }
    }

    fn pipeline(&self) -> Result<Arc<Pipeline>, Status> {
        self.shared
            .pipeline
            .read()
            .map(|p| p.clone())
            .map_err(|_| Status::internal("pipeline state poisoned"))
    }
}

/// Runs `f` on every switch instance on its thread (outside the async runtime's workers).
/// The error of an update of an atomic batch that was not applied, or was undone, because
/// another update of the batch failed.
fn rolled_back() -> P4Error {
    P4Error::new(
        Code::Aborted,
        "not applied: another update of this atomic batch failed, and the batch was rolled back",
    )
}

impl Service {
    /// Applies `ops` on every switch instance, one call per instance between two packets;
    /// `atomic`: when one fails, the instance's control state is put back as it was, so
    /// packets see all of the batch or none of it. The results are the first instance's
    /// (every instance holds the same control state).
    async fn apply_ops(
        &self,
        ops: Vec<Op>,
        atomic: bool,
    ) -> Result<Vec<Result<(), P4Error>>, Status> {
        if ops.is_empty() {
            return Ok(Vec::new());
        }
        let ops = Arc::new(ops);
        let per_instance = on_switch(self.shared.handle.clone(), UNTIL_ANSWERED, move |sw, _| {
            let before = atomic.then(|| sw.control_state());
            let results: Vec<_> = ops.iter().map(|op| device::apply(sw, op)).collect();
            if let Some(before) = before.filter(|_| results.iter().any(|r| r.is_err())) {
                sw.restore_control_state(before);
            }
            results
        })
        .await?;
        per_instance
            .into_iter()
            .next()
            .ok_or_else(|| Status::unavailable("the switch has no running instance"))
    }
}

impl Service {
    /// Answers `queries` on the running switch: every instance answers for its pipes, and
    /// their counts are summed.
    async fn read_running(
        &self,
        pipeline: &Arc<Pipeline>,
        queries: Vec<Query>,
        now: u64,
    ) -> Result<Vec<p4v1::Entity>, Status> {
        let p = pipeline.clone();
        let answers = on_switch(
            self.shared.handle.clone(),
            UNTIL_ANSWERED,
            move |sw, owns| {
                let mut out = Vec::new();
                for q in &queries {
                    out.extend(device::read(sw, owns, &p.schema, q, now)?);
                }
                Ok::<_, P4Error>(out)
            },
        )
        .await?;
        let mut it = answers.into_iter();
        let mut entities = it.next().unwrap_or(Ok(Vec::new())).map_err(status)?;
        for other in it {
            device::merge_counts(&mut entities, &other.map_err(status)?);
        }
        Ok(entities)
    }
}

/// Runs `f` on every switch instance's thread, waiting at most `wait` for the answers.
async fn on_switch<R: Send + 'static>(
    h: SwitchHandle,
    wait: Duration,
    f: impl Fn(&mut Switch, u8) -> R + Send + Sync + 'static,
) -> Result<Vec<R>, Status> {
    tokio::task::spawn_blocking(move || h.each(wait, f))
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map_err(|e| Status::unavailable(format!("switch: {e}")))
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
        let atomic = match Atomicity::try_from(req.atomicity) {
            Ok(Atomicity::ContinueOnError) => false,
            Ok(Atomicity::RollbackOnError | Atomicity::DataplaneAtomic) => true,
            Err(_) => {
                return Err(Status::invalid_argument(format!(
                    "unknown atomicity {}",
                    req.atomicity
                )))
            }
        };
        // After VERIFY_AND_SAVE, writes refer to the saved config and go to its state.
        let staged = self.staged()?;
        let pipeline = self.pipeline_for(staged)?;
        // An atomic batch puts the digest configurations back too when it fails.
        let digests_before = if atomic {
            Some(
                self.digests_of(staged)
                    .lock()
                    .map_err(|_| Status::internal("digest state poisoned"))?
                    .clone(),
            )
        } else {
            None
        };
        // Each update: answered here (digest configurations live in the server, refusals of
        // the checks), or an operation for the switch.
        enum Step {
            Done(Result<(), P4Error>),
            Switch(Box<Planned>),
        }
        let steps: Vec<Step> = req
            .updates
            .iter()
            .map(
                |u| match u.entity.as_ref().and_then(|e| e.entity.as_ref()) {
                    Some(p4v1::entity::Entity::DigestEntry(d)) => {
                        Step::Done(self.digest_write(staged, &pipeline.schema, u.r#type, d))
                    }
                    _ => match self.plan(staged, &pipeline.schema, u) {
                        Ok(p) => Step::Switch(Box::new(p)),
                        Err(e) => Step::Done(Err(e)),
                    },
                },
            )
            .collect();
        // An atomic batch with a refused update does not reach the switch at all.
        let refused = steps.iter().any(|s| matches!(s, Step::Done(Err(_))));
        let ops: Vec<Op> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Switch(p) if !(atomic && refused) => Some(p.op.clone()),
                _ => None,
            })
            .collect();
        let mut applied = match staged {
            true => tokio::task::block_in_place(|| self.apply_staged(&ops, atomic))?,
            false => self.apply_ops(ops, atomic).await?,
        }
        .into_iter();
        let (mut results, changes): (Vec<Result<(), P4Error>>, Vec<_>) = steps
            .into_iter()
            .map(|s| match s {
                Step::Done(r) => (r, None),
                Step::Switch(..) if atomic && refused => (Err(rolled_back()), None),
                Step::Switch(p) => (
                    applied.next().unwrap_or_else(|| {
                        Err(P4Error::new(Code::Internal, "no answer from the switch"))
                    }),
                    Some(p),
                ),
            })
            .unzip();
        if atomic && results.iter().any(|r| r.is_err()) {
            for r in &mut results {
                if r.is_ok() {
                    *r = Err(rolled_back());
                }
            }
            if let (Some(before), Ok(mut now)) = (digests_before, self.digests_of(staged).lock()) {
                *now = before;
            }
        }
        let mut extras = self
            .extras_of(staged)
            .lock()
            .map_err(|_| Status::internal("extras poisoned"))?;
        for ((u, r), planned) in req.updates.iter().zip(&results).zip(changes) {
            match r {
                Ok(()) => {
                    extras.record(&pipeline.schema, u);
                    let (shot, weights, watched) = match planned {
                        Some(p) => (p.shot, p.weights, p.watched),
                        None => (None, None, None),
                    };
                    match shot {
                        Some(c) => extras.shots.commit(c),
                        None => extras.shots.record(u),
                    }
                    if let Some(c) = weights {
                        extras.weights.commit(c);
                    }
                    if let Some(w) = watched {
                        let key = (w.written.action_profile_id, w.written.group_id);
                        extras.watched.insert(key, w);
                    }
                    tracing::debug!(kind = u.r#type, "p4runtime write")
                }
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
        // After VERIFY_AND_SAVE, reads refer to the saved config and see its state.
        let staged = self.staged()?;
        let pipeline = self.pipeline_for(staged)?;
        let mut queries: Vec<Query> = Vec::new();
        let mut local = Vec::new();
        for e in &req.entities {
            if let Some(p4v1::entity::Entity::DigestEntry(d)) = &e.entity {
                local.extend(self.digest_read(staged, &pipeline.schema, d)?);
                continue;
            }
            queries.extend(request::read_query(&pipeline.schema, e).map_err(status)?);
        }
        let now = self.shared.clock.now().0;
        let mut entities = match staged {
            true => tokio::task::block_in_place(|| self.read_staged(&queries, now))?,
            false => self.read_running(&pipeline, queries, now).await?,
        };
        entities.extend(local);
        if let Ok(extras) = self.extras_of(staged).lock() {
            entities.retain(|e| !extras.shots.hides(e) && !extras.weights.hides(e));
            for e in &mut entities {
                extras.fill(&pipeline.schema, e);
            }
        }
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
        let action = Action::try_from(req.action).map_err(|_| {
            Status::invalid_argument(format!(
                "unknown pipeline config action {} (VERIFY is 1 … RECONCILE_AND_COMMIT 5)",
                req.action
            ))
        })?;
        let compile = self.shared.compile.clone();
        let config = req.config.clone();
        let verified = || -> Result<Pipeline, Status> {
            let cfg = config
                .as_ref()
                .ok_or_else(|| Status::invalid_argument("the request has no config"))?;
            verify(&compile, cfg)
        };
        // COMMIT: the saved config and the state written for it since the save.
        let mut committed = None;
        let (next, keep_state) = match action {
            Action::Verify => {
                tokio::task::block_in_place(verified)?;
                return Ok(Response::new(p4v1::SetForwardingPipelineConfigResponse {}));
            }
            Action::VerifyAndSave => {
                let p = tokio::task::block_in_place(verified)?;
                self.save(p).await?;
                return Ok(Response::new(p4v1::SetForwardingPipelineConfigResponse {}));
            }
            Action::VerifyAndCommit => {
                let p = Arc::new(tokio::task::block_in_place(verified)?);
                self.drop_stage()?;
                (p, false)
            }
            Action::ReconcileAndCommit => {
                let p = Arc::new(tokio::task::block_in_place(verified)?);
                self.drop_stage()?;
                (p, true)
            }
            Action::Commit if config.is_some() => {
                return Err(Status::invalid_argument(
                    "COMMIT takes no config: it commits the one saved by VERIFY_AND_SAVE",
                ))
            }
            Action::Commit => {
                let c = self.take_stage()?;
                let p = c.pipeline.clone();
                committed = Some(c);
                (p, false)
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
            let written = committed.as_ref().map(|c| c.state.clone());
            let results = on_switch(self.shared.handle.clone(), UNTIL_ANSWERED, move |sw, _| {
                // Building the switch recurses over the program's expressions (as deep as the
                // frontend allows): on the compiler's big stack, not the pipeline thread's.
                let prog = prog.clone();
                let written = written.clone();
                p4::compile::on_big_stack(move || {
                    let mut fresh = Switch::new(prog, sw.config().clone()).map_err(|e| {
                        Status::failed_precondition(format!("cannot build the switch: {e}"))
                    })?;
                    if let Some(state) = written {
                        // COMMIT: the state written since VERIFY_AND_SAVE.
                        let state = state
                            .lock()
                            .map_err(|_| Status::internal("saved state poisoned"))?
                            .clone();
                        fresh.restore_control_state(state);
                    }
                    if keep_state {
                        // The spec's answer when the forwarding state cannot be kept.
                        migrate(sw, &mut fresh).map_err(|e| {
                            Status::invalid_argument(format!(
                                "RECONCILE_AND_COMMIT cannot keep the forwarding state (nothing \
                                 changed): {e}"
                            ))
                        })?;
                    }
                    drop(std::mem::replace(sw, fresh));
                    Ok::<(), Status>(())
                })
            })
            .await?;
            for r in results {
                r?;
            }
            if let Some(c) = committed {
                if let Ok(mut x) = self.shared.extras.lock() {
                    *x = c.extras;
                }
                if let Ok(mut d) = self.shared.digests.lock() {
                    *d = c.digests;
                }
            } else if !keep_state {
                if let Ok(mut x) = self.shared.extras.lock() {
                    x.clear();
                }
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
