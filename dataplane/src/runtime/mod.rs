//! The running switch: ports on I/O threads, a packet pipeline on its own thread, bounded
//! channels between them, run-time control, statistics and a graceful stop.
//!
//! Threads (see [`Runtime::start`]):
//! - per port, an **rx thread** that receives batches (non-blocking `recv_batch`, then
//!   `poll` on the port's descriptor when idle) and hands each batch to the pipeline thread
//!   through one bounded channel shared by all ports; a full channel drops the batch and
//!   counts it ([`PortRuntimeCounters::ingress_full`]);
//! - one **pipeline thread** that owns the [`Pipeline`] (for pisa: the whole `Switch`, all pipes,
//!   ingress + traffic manager + egress in one call), runs every frame through it, groups the
//!   frames that leave by egress port and sends each group to that port's bounded transmit
//!   channel (full → counted drop, [`PortRuntimeCounters::egress_full`]; no port attached →
//!   [`RuntimeStats::no_port`]); it also runs control requests ([`RuntimeHandle::call`]) between
//!   batches, so table changes never race with packets;
//! - per port, a **tx thread** that blocks on its transmit channel, sends batches and lets the
//!   link model release held frames on time (`flush` at the port's `poll_timeout`).
//!
//! Every port is wrapped in a [`LinkPort`], so rate, delay and faults can be changed while
//! running through its [`LinkControl`] ([`RuntimeHandle::link`]). A port's `Mutex` is held only
//! for one non-blocking call at a time; waiting happens outside it.
//!
//! Stopping ([`Runtime::stop`]): rx threads stop receiving; the pipeline thread processes what
//! is already in its channel and exits; tx threads send what is queued and wait (up to
//! [`RuntimeConfig::drain_timeout`]) for link models to release held frames. Then the
//! pipeline comes back to the caller together with final statistics.
//!
//! The clock is passed in: [`crate::WallClock`] in production, [`crate::VirtualClock`] in tests.
//!
//! One pipeline thread drives the whole switch because pisa's `Switch` runs ingress, traffic
//! manager and egress of every pipe in one call. Splitting it per pipe (a thread per pipe, as
//! on hardware) needs entry points in `pipeline::switch` that run only the ingress of one pipe
//! up to the traffic manager's enqueue (returning copies tagged with their egress port) and
//! only the egress of one pipe for a dequeued copy, with the PRE and the queues shared or
//! owned by a TM thread between them; this module's channels would then carry copies from
//! ingress threads to the egress thread of the copy's pipe.

mod metrics;
mod stats;

pub use metrics::{render_prometheus, MetricsServer};
pub use stats::{
    PortReport, PortRuntimeCounters, PortRuntimeStats, RuntimeStats, BATCH_BUCKETS, BATCH_BUCKET_LE,
};

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, select, Receiver, RecvTimeoutError, Sender, TrySendError};

use crate::link::{LinkConfig, LinkConfigError, LinkControl, LinkPort};
use crate::port::{Frame, FrameBatch, Port, PortError, StatsHandle};
use crate::time::{Clock, Nanos};
use stats::GlobalCounters;

/// Device ports are 9 bits (TNA: pipe in bits 8:7, port in 6:0).
pub const NUM_DEVPORTS: usize = 512;

/// The packet pipeline the runtime drives. pisa's binary implements it for its `Switch`; tests
/// implement small ones.
pub trait Pipeline: Send + 'static {
    /// Runs one frame that arrived on device port `port` at `ts`; calls `out(egress devport,
    /// bytes)` for every frame that leaves.
    fn process(&mut self, port: u16, data: &[u8], ts: Nanos, out: &mut dyn FnMut(u16, Vec<u8>));

    /// Takes back the buffer of a frame that was sent, for reuse.
    fn recycle(&mut self, _buf: Vec<u8>) {}
}

/// Which thread a [`ThreadHook`] is called on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ThreadRole {
    /// The pipeline thread.
    Pipeline,
    /// The receive thread of a device port.
    Rx(u16),
    /// The transmit thread of a device port.
    Tx(u16),
}

/// Called first thing on every runtime thread (pinning it to a core, naming it in traces).
pub type ThreadHook = Arc<dyn Fn(ThreadRole) + Send + Sync>;

/// Settings of a [`Runtime`].
#[derive(Clone)]
pub struct RuntimeConfig {
    /// Frames per receive / transmit batch.
    pub batch: usize,
    /// Batches the channel into the pipeline thread holds.
    pub ingress_channel: usize,
    /// Batches each port's transmit channel holds.
    pub egress_channel: usize,
    /// Longest wait of an idle thread before it checks for a stop or timed work.
    pub idle_wait: Duration,
    /// How long [`Runtime::stop`] waits for link models to release held frames.
    pub drain_timeout: Duration,
    /// Run on every thread as it starts.
    pub thread_hook: Option<ThreadHook>,
}

impl std::fmt::Debug for RuntimeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeConfig")
            .field("batch", &self.batch)
            .field("ingress_channel", &self.ingress_channel)
            .field("egress_channel", &self.egress_channel)
            .field("idle_wait", &self.idle_wait)
            .field("drain_timeout", &self.drain_timeout)
            .finish_non_exhaustive()
    }
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            batch: 32,
            ingress_channel: 1024,
            egress_channel: 1024,
            idle_wait: Duration::from_millis(20),
            drain_timeout: Duration::from_secs(1),
            thread_hook: None,
        }
    }
}

/// One port to attach: its device port number, the opened port and its link settings.
pub struct PortSetup {
    /// TNA device port (pipe << 7 | port).
    pub devport: u16,
    /// The opened port.
    pub port: Box<dyn Port>,
    /// Link model and faults at start.
    pub link: LinkConfig,
}

/// Errors of the runtime.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// Two ports claim the same device port.
    #[error("device port {0} is given twice")]
    DuplicatePort(u16),
    /// A device port outside 0..512.
    #[error("device port {0} is out of range (0..=511)")]
    PortOutOfRange(u16),
    /// No ports at all.
    #[error("no ports to run")]
    NoPorts,
    /// A link setting is invalid.
    #[error("port {port}: {source}")]
    Link {
        /// Device port.
        port: u16,
        /// Why.
        #[source]
        source: LinkConfigError,
    },
    /// No port is attached at this device port.
    #[error("no port is attached at device port {0}")]
    NoSuchPort(u16),
    /// The pipeline thread is gone (stopped or panicked).
    #[error("the pipeline thread is not running")]
    Stopped,
    /// A control request did not finish in time.
    #[error("the pipeline thread did not answer within {0:?}")]
    Timeout(Duration),
    /// Spawning a thread failed.
    #[error("cannot start thread {name}: {source}")]
    Spawn {
        /// Thread name.
        name: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A runtime thread panicked.
    #[error("thread {0} panicked")]
    Panicked(String),
}

/// A batch of frames received on one device port.
struct RxBatch {
    port: u16,
    frames: Vec<Frame>,
}

type Control<P> = Box<dyn FnOnce(&mut P) + Send>;

type SharedPort = Arc<Mutex<LinkPort<Box<dyn Port>>>>;

/// Spare frame buffers on their way back from the tx threads (which own a buffer once its
/// frame is sent) to the rx threads (which need one per received frame), so that steady
/// forwarding does not allocate. Bounded: surplus buffers are freed, a shortage allocates.
#[derive(Clone)]
struct FreeList {
    put: Sender<Vec<u8>>,
    get: Receiver<Vec<u8>>,
}

impl FreeList {
    fn new(capacity: usize) -> FreeList {
        let (put, get) = bounded(capacity.max(1));
        FreeList { put, get }
    }
    fn give(&self, b: Vec<u8>) {
        if b.capacity() > 0 {
            let _ = self.put.try_send(b);
        }
    }
    /// Moves up to `n` spare buffers into `fb`'s pool.
    fn refill(&self, fb: &mut FrameBatch, n: usize) {
        for _ in 0..n {
            match self.get.try_recv() {
                Ok(b) => fb.give_buffer(b),
                Err(_) => break,
            }
        }
    }
}

fn lock(p: &SharedPort) -> MutexGuard<'_, LinkPort<Box<dyn Port>>> {
    // A panic while holding the lock leaves the port usable: its state is plain data.
    p.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the runtime knows about one attached port (shared with handles).
struct PortInfo {
    devport: u16,
    name: String,
    stats: StatsHandle,
    link: LinkControl,
    counters: Arc<PortRuntimeCounters>,
}

struct Shared {
    ports: Vec<PortInfo>,
    global: GlobalCounters,
}

/// A cloneable handle to a running [`Runtime`]: statistics, link control and control
/// requests run on the pipeline thread.
pub struct RuntimeHandle<P: Pipeline> {
    shared: Arc<Shared>,
    control: Sender<Control<P>>,
}

impl<P: Pipeline> Clone for RuntimeHandle<P> {
    fn clone(&self) -> Self {
        RuntimeHandle {
            shared: self.shared.clone(),
            control: self.control.clone(),
        }
    }
}

impl<P: Pipeline> RuntimeHandle<P> {
    /// A snapshot of every port's counters and the runtime's own.
    pub fn stats(&self) -> RuntimeStats {
        RuntimeStats {
            ports: self
                .shared
                .ports
                .iter()
                .map(|p| {
                    stats::snapshot_port(
                        p.devport,
                        &p.name,
                        p.stats.snapshot(),
                        &p.counters,
                        (p.link.tx_stats(), p.link.rx_stats()),
                    )
                })
                .collect(),
            no_port: self.shared.global.no_port.load(Ordering::Relaxed),
            processed: self.shared.global.processed.load(Ordering::Relaxed),
        }
    }

    /// The device ports attached, in order.
    pub fn devports(&self) -> Vec<u16> {
        self.shared.ports.iter().map(|p| p.devport).collect()
    }

    /// The link control of device port `devport`.
    pub fn link(&self, devport: u16) -> Result<LinkControl, RuntimeError> {
        self.shared
            .ports
            .iter()
            .find(|p| p.devport == devport)
            .map(|p| p.link.clone())
            .ok_or(RuntimeError::NoSuchPort(devport))
    }

    /// Runs `f` on the pipeline thread between two batches and returns its result, waiting at
    /// most `timeout`.
    pub fn call<R: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl FnOnce(&mut P) -> R + Send + 'static,
    ) -> Result<R, RuntimeError> {
        let (tx, rx) = bounded(1);
        let job: Control<P> = Box::new(move |p| {
            let _ = tx.send(f(p));
        });
        self.control
            .send_timeout(job, timeout)
            .map_err(|_| RuntimeError::Stopped)?;
        match rx.recv_timeout(timeout) {
            Ok(r) => Ok(r),
            Err(RecvTimeoutError::Timeout) => Err(RuntimeError::Timeout(timeout)),
            Err(RecvTimeoutError::Disconnected) => Err(RuntimeError::Stopped),
        }
    }
}

/// The running switch. See the module documentation.
pub struct Runtime<P: Pipeline> {
    handle: RuntimeHandle<P>,
    stop_rx: Arc<AtomicBool>,
    rx_threads: Vec<(String, JoinHandle<()>)>,
    tx_threads: Vec<(String, JoinHandle<()>)>,
    pipeline: Option<JoinHandle<P>>,
    /// Dropped at stop so the pipeline thread sees the end of control requests too.
    control_keep: Option<Sender<Control<P>>>,
}

fn spawn<T: Send + 'static>(
    name: String,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<(String, JoinHandle<T>), RuntimeError> {
    let h = std::thread::Builder::new()
        .name(name.clone())
        .spawn(f)
        .map_err(|source| RuntimeError::Spawn {
            name: name.clone(),
            source,
        })?;
    Ok((name, h))
}

impl<P: Pipeline> Runtime<P> {
    /// Starts the threads. `clock` gives every timestamp.
    pub fn start(
        pipeline: P,
        ports: Vec<PortSetup>,
        clock: Arc<dyn Clock>,
        cfg: RuntimeConfig,
    ) -> Result<Runtime<P>, RuntimeError> {
        if ports.is_empty() {
            return Err(RuntimeError::NoPorts);
        }
        let mut seen = vec![false; NUM_DEVPORTS];
        let mut infos = Vec::new();
        let mut shared_ports = Vec::new();
        for s in ports {
            let slot = seen
                .get_mut(s.devport as usize)
                .ok_or(RuntimeError::PortOutOfRange(s.devport))?;
            if *slot {
                return Err(RuntimeError::DuplicatePort(s.devport));
            }
            *slot = true;
            let lp = LinkPort::new(s.port, s.link).map_err(|source| RuntimeError::Link {
                port: s.devport,
                source,
            })?;
            infos.push(PortInfo {
                devport: s.devport,
                name: lp.name().to_string(),
                stats: lp.stats_handle(),
                link: lp.control(),
                counters: Arc::new(PortRuntimeCounters::default()),
            });
            shared_ports.push(Arc::new(Mutex::new(lp)));
        }
        let shared = Arc::new(Shared {
            ports: infos,
            global: GlobalCounters::default(),
        });
        let batch = cfg.batch.max(1);
        let (ing_tx, ing_rx) = bounded::<RxBatch>(cfg.ingress_channel.max(1));
        let (ctl_tx, ctl_rx) = bounded::<Control<P>>(64);
        let stop_rx = Arc::new(AtomicBool::new(false));
        let free = FreeList::new(4096);

        let mut egress: Vec<Option<Sender<Vec<Vec<u8>>>>> = vec![None; NUM_DEVPORTS];
        let mut tx_threads = Vec::new();
        let mut rx_threads = Vec::new();
        for (i, port) in shared_ports.iter().enumerate() {
            let info = &shared.ports[i];
            let devport = info.devport;
            let (etx, erx) = bounded::<Vec<Vec<u8>>>(cfg.egress_channel.max(1));
            egress[devport as usize] = Some(etx);
            let fd = lock(port).raw_fd();
            {
                let port = port.clone();
                let clock = clock.clone();
                let counters = info.counters.clone();
                let ing = ing_tx.clone();
                let stop = stop_rx.clone();
                let hook = cfg.thread_hook.clone();
                let idle = cfg.idle_wait;
                let free = free.clone();
                rx_threads.push(spawn(format!("pisa-rx{devport}"), move || {
                    if let Some(h) = hook {
                        h(ThreadRole::Rx(devport));
                    }
                    rx_loop(
                        devport, &port, fd, &*clock, &counters, &ing, &stop, batch, idle, &free,
                    );
                })?);
            }
            {
                let port = port.clone();
                let clock = clock.clone();
                let counters = info.counters.clone();
                let hook = cfg.thread_hook.clone();
                let idle = cfg.idle_wait;
                let drain = cfg.drain_timeout;
                let free = free.clone();
                tx_threads.push(spawn(format!("pisa-tx{devport}"), move || {
                    if let Some(h) = hook {
                        h(ThreadRole::Tx(devport));
                    }
                    tx_loop(&port, &erx, &*clock, &counters, batch, idle, drain, &free);
                })?);
            }
        }
        drop(ing_tx);
        let pipeline = {
            let shared = shared.clone();
            let hook = cfg.thread_hook.clone();
            spawn("pisa-pipeline".to_string(), move || {
                if let Some(h) = hook {
                    h(ThreadRole::Pipeline);
                }
                pipeline_loop(pipeline, &ing_rx, &ctl_rx, egress, &shared)
            })?
            .1
        };
        Ok(Runtime {
            handle: RuntimeHandle {
                shared,
                control: ctl_tx.clone(),
            },
            stop_rx,
            rx_threads,
            tx_threads,
            pipeline: Some(pipeline),
            control_keep: Some(ctl_tx),
        })
    }

    /// A handle for statistics and control from other threads.
    pub fn handle(&self) -> RuntimeHandle<P> {
        self.handle.clone()
    }

    /// Stops receiving, drains the channels and link models, joins every thread and returns
    /// the pipeline and the final statistics.
    pub fn stop(mut self) -> Result<(P, RuntimeStats), RuntimeError> {
        self.stop_rx.store(true, Ordering::Release);
        let mut first_err = None;
        for (name, h) in self.rx_threads.drain(..) {
            if h.join().is_err() {
                first_err.get_or_insert(RuntimeError::Panicked(name));
            }
        }
        // Every ingress sender is gone now; the pipeline thread drains and exits once no
        // control sender is left either (handles may still exist: it also exits when the
        // ingress channel is empty and closed).
        self.control_keep = None;
        let p = match self.pipeline.take().map(JoinHandle::join) {
            Some(Ok(p)) => Some(p),
            _ => {
                first_err.get_or_insert(RuntimeError::Panicked("pisa-pipeline".into()));
                None
            }
        };
        for (name, h) in self.tx_threads.drain(..) {
            if h.join().is_err() {
                first_err.get_or_insert(RuntimeError::Panicked(name));
            }
        }
        let stats = self.handle.stats();
        match (p, first_err) {
            (Some(p), None) => Ok((p, stats)),
            (_, Some(e)) => Err(e),
            (None, None) => Err(RuntimeError::Stopped),
        }
    }
}

impl<P: Pipeline> Drop for Runtime<P> {
    fn drop(&mut self) {
        // Dropped without `stop`: still end the threads.
        self.stop_rx.store(true, Ordering::Release);
        self.control_keep = None;
        for (_, h) in self.rx_threads.drain(..) {
            let _ = h.join();
        }
        if let Some(h) = self.pipeline.take() {
            let _ = h.join();
        }
        for (_, h) in self.tx_threads.drain(..) {
            let _ = h.join();
        }
    }
}

fn until(due: Option<Nanos>, now: Nanos, cap: Duration) -> Duration {
    match due {
        Some(d) => Duration::from(d - now).min(cap),
        None => cap,
    }
}

#[allow(clippy::too_many_arguments)]
fn rx_loop(
    devport: u16,
    port: &SharedPort,
    fd: Option<RawFd>,
    clock: &dyn Clock,
    counters: &PortRuntimeCounters,
    ing: &Sender<RxBatch>,
    stop: &AtomicBool,
    batch: usize,
    idle: Duration,
    free: &FreeList,
) {
    let mut fb = FrameBatch::new(batch);
    free.refill(&mut fb, batch);
    let mut polled = Instant::now();
    while !stop.load(Ordering::Acquire) {
        if polled.elapsed() >= Duration::from_millis(500) {
            // Backends that learn about drops from the kernel (AF_PACKET's ring statistics)
            // fold them into their counters when asked for a snapshot.
            polled = Instant::now();
            let _ = lock(port).stats();
        }
        let now = clock.now();
        let (got, due) = {
            let mut p = lock(port);
            let r = p.recv_batch(&mut fb, now);
            (r, p.poll_timeout())
        };
        match got {
            Ok(0) => {
                let wait = until(due, now, idle);
                if wait.is_zero() {
                    continue;
                }
                match fd {
                    Some(fd) => {
                        if crate::port::poll_fd("rx", fd, wait).is_err() {
                            counters.io_errors.fetch_add(1, Ordering::Relaxed);
                            std::thread::sleep(wait);
                        }
                    }
                    // No descriptor (memory, pcap): nap briefly.
                    None => std::thread::sleep(wait.min(Duration::from_micros(200))),
                }
                continue;
            }
            Ok(n) => {
                counters.rx_batch(n);
                let mut frames = Vec::with_capacity(n);
                for i in 0..fb.len() {
                    let ts = fb.frames()[i].ts;
                    if let Some(data) = fb.take_data(i) {
                        frames.push(Frame { data, ts });
                    }
                }
                fb.clear();
                free.refill(&mut fb, n);
                match ing.try_send(RxBatch {
                    port: devport,
                    frames,
                }) {
                    Ok(()) => {}
                    Err(TrySendError::Full(b)) => {
                        counters
                            .ingress_full
                            .fetch_add(b.frames.len() as u64, Ordering::Relaxed);
                        for f in b.frames {
                            fb.give_buffer(f.data);
                        }
                    }
                    Err(TrySendError::Disconnected(_)) => return,
                }
            }
            Err(e) => {
                counters.io_errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(port = devport, error = %e, "receive failed");
                std::thread::sleep(idle);
            }
        }
    }
    let _ = lock(port).stats();
}

#[allow(clippy::too_many_arguments)]
fn tx_loop(
    port: &SharedPort,
    chan: &Receiver<Vec<Vec<u8>>>,
    clock: &dyn Clock,
    counters: &PortRuntimeCounters,
    batch: usize,
    idle: Duration,
    drain: Duration,
    free: &FreeList,
) {
    let mut fb = FrameBatch::new(batch);
    let send = |fb: &mut FrameBatch, now: Nanos| {
        counters.tx_batches.fetch_add(1, Ordering::Relaxed);
        if lock(port).send_batch(fb, now).is_err() {
            counters.io_errors.fetch_add(1, Ordering::Relaxed);
            fb.clear();
        }
    };
    loop {
        let now = clock.now();
        let due = lock(port).poll_timeout();
        match chan.recv_timeout(until(due, now, idle)) {
            Ok(frames) => {
                let now = clock.now();
                for data in frames {
                    let old = match fb.push_owned(data, now) {
                        Ok(old) => old,
                        Err(data) => {
                            send(&mut fb, now);
                            // The batch is empty now, so this push succeeds.
                            fb.push_owned(data, now).unwrap_or_default()
                        }
                    };
                    if let Some(b) = old {
                        free.give(b);
                    }
                }
                if !fb.is_empty() {
                    send(&mut fb, now);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        let now = clock.now();
        let mut p = lock(port);
        if p.poll_timeout().is_some_and(|d| d <= now) && p.flush(now).is_err() {
            counters.io_errors.fetch_add(1, Ordering::Relaxed);
        }
    }
    // Drain: let the link model release what it holds, for at most `drain` of real time.
    let start = Instant::now();
    loop {
        let now = clock.now();
        let mut p = lock(port);
        let _ = p.flush(now);
        match p.poll_timeout() {
            None => break,
            Some(d) => {
                drop(p);
                if start.elapsed() >= drain {
                    break;
                }
                std::thread::sleep(until(Some(d), now, Duration::from_millis(1)));
            }
        }
    }
}

fn pipeline_loop<P: Pipeline>(
    mut pipeline: P,
    ing: &Receiver<RxBatch>,
    ctl: &Receiver<Control<P>>,
    egress: Vec<Option<Sender<Vec<Vec<u8>>>>>,
    shared: &Shared,
) -> P {
    let counters_of = |devport: u16| {
        shared
            .ports
            .iter()
            .find(|p| p.devport == devport)
            .map(|p| p.counters.clone())
    };
    let out_counters: Vec<Option<Arc<PortRuntimeCounters>>> =
        (0..NUM_DEVPORTS as u16).map(counters_of).collect();
    // Frames leaving per egress port, gathered over one receive batch.
    let mut pending: Vec<Vec<Vec<u8>>> = vec![Vec::new(); NUM_DEVPORTS];
    let mut touched: Vec<u16> = Vec::new();
    let mut ctl_open = true;
    loop {
        let batch = if ctl_open {
            select! {
                recv(ing) -> b => match b {
                    Ok(b) => b,
                    Err(_) => break,
                },
                recv(ctl) -> c => {
                    match c {
                        Ok(job) => job(&mut pipeline),
                        Err(_) => ctl_open = false,
                    }
                    continue;
                }
            }
        } else {
            match ing.recv() {
                Ok(b) => b,
                Err(_) => break,
            }
        };
        for f in &batch.frames {
            pipeline.process(batch.port, &f.data, f.ts, &mut |port, bytes| {
                if let Some(q) = pending.get_mut(port as usize) {
                    if q.is_empty() {
                        touched.push(port);
                    }
                    q.push(bytes);
                }
            });
        }
        shared
            .global
            .processed
            .fetch_add(batch.frames.len() as u64, Ordering::Relaxed);
        for f in batch.frames {
            pipeline.recycle(f.data);
        }
        for port in touched.drain(..) {
            let frames = std::mem::take(&mut pending[port as usize]);
            let n = frames.len() as u64;
            match &egress[port as usize] {
                Some(s) => match s.try_send(frames) {
                    Ok(()) => {}
                    Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                        if let Some(c) = &out_counters[port as usize] {
                            c.egress_full.fetch_add(n, Ordering::Relaxed);
                        }
                    }
                },
                None => {
                    shared.global.no_port.fetch_add(n, Ordering::Relaxed);
                }
            }
        }
        // Control requests also get a turn while traffic is heavy.
        while let Ok(job) = ctl.try_recv() {
            job(&mut pipeline);
        }
    }
    // Late control requests are refused by dropping them (their callers see `Stopped`).
    pipeline
}

#[cfg(test)]
mod tests;

/// Opens nothing: a helper that checks a port list before [`Runtime::start`] would, for
/// command lines that want to report every problem before opening interfaces.
pub fn check_devports(ports: &[u16]) -> Result<(), RuntimeError> {
    if ports.is_empty() {
        return Err(RuntimeError::NoPorts);
    }
    let mut seen = vec![false; NUM_DEVPORTS];
    for &p in ports {
        let slot = seen
            .get_mut(p as usize)
            .ok_or(RuntimeError::PortOutOfRange(p))?;
        if *slot {
            return Err(RuntimeError::DuplicatePort(p));
        }
        *slot = true;
    }
    Ok(())
}

/// A port error while opening, with the device port it was for.
#[derive(Debug, thiserror::Error)]
#[error("port {devport} ({spec}): {source}")]
pub struct OpenError {
    /// Device port.
    pub devport: u16,
    /// The spec as given.
    pub spec: String,
    /// Why.
    #[source]
    pub source: PortError,
}
