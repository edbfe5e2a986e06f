//! The running switch: ports on I/O threads, the packet pipeline on its own thread(s), bounded
//! channels between them, run-time control, statistics and a graceful stop.
//!
//! Two modes share every thread loop (the pipeline threads live in [`pipes`]):
//! - [`Runtime`]: one **pipeline thread** owns a whole-switch [`Pipeline`] (for pisa: the whole
//!   `Switch`, all pipes, ingress + traffic manager + egress in one call);
//! - [`PipeRuntime`]: one **pipe thread** per hardware pipe that has ports, each owning a
//!   [`PipeStage`] (ingress up to the traffic manager, then queue + egress of its own ports);
//!   copies for another pipe's ports cross to that pipe's thread over bounded channels, as on
//!   the hardware where each pipe is its own piece of silicon.
//!
//! Two I/O modes ([`RuntimeConfig::io`], [`IoMode`]):
//! - **inline** (the default; run to completion, see [`inline`]): no rx or tx threads; each
//!   pipeline thread receives from its own ports (round robin, non-blocking), runs the frames
//!   and sends them on its own ports itself. Frames for a port another thread owns (and copies
//!   for another pipe) cross over that port's bounded transmit channel (full → counted drop).
//!   Idle, the thread sleeps in one `ppoll` over its ports' descriptors and an eventfd that
//!   control requests and other threads ring. It saves the two thread hand-offs per frame of
//!   the threaded mode: on a 2-core VM (`pisa bench forward --io both`, l2l3.p4, medians of 3
//!   rounds, 64 B) AF_XDP forwards 0.83 Mpps (threads 0.58), AF_PACKET 0.73 (0.56), DPDK over
//!   a `net_af_packet` vdev 0.67 (0.44), against the kernel bridge's 1.01 on the same veths.
//! - **threads**: the threads below.
//!
//! Threads (threaded mode):
//! - per port, an **rx thread** that receives batches (non-blocking `recv_batch`, then
//!   `poll` on the port's descriptor when idle) and hands each batch to the pipeline thread
//!   serving the port through that thread's bounded channel; a full channel drops the batch and
//!   counts it ([`PortRuntimeCounters::ingress_full`]);
//! - the **pipeline thread(s)**, which run every frame through the pipeline, group the frames
//!   that leave by egress port and send each group to that port's bounded transmit channel
//!   (full → counted drop, [`PortRuntimeCounters::egress_full`]; no port attached →
//!   [`RuntimeStats::no_port`]); they also run control requests ([`RuntimeHandle::call`],
//!   [`PipeHandle::call_pipe`], [`PipeHandle::call_each`]) between batches, so table changes
//!   never race with packets;
//! - per port, a **tx thread** that blocks on its transmit channel, sends batches and lets the
//!   link model release held frames on time (`flush` at the port's `poll_timeout`).
//!
//! Every thread first calls [`RuntimeConfig::thread_hook`] with its [`ThreadRole`] (pisa pins
//! it to a core there). Every port is wrapped in a [`LinkPort`], so rate, delay and faults can
//! be changed while running through its [`LinkControl`] ([`RuntimeHandle::link`]). A port's
//! `Mutex` is held only for one non-blocking call at a time; waiting happens outside it.
//!
//! Stopping ([`Runtime::stop`], [`PipeRuntime::stop`]): rx threads stop receiving; the pipeline
//! threads process what is already in their channels (and, per pipe, every copy still crossing
//! between them) and exit; tx threads send what is queued and wait (up to
//! [`RuntimeConfig::drain_timeout`]) for link models to release held frames. Then the
//! pipeline(s) come back to the caller together with final statistics.
//!
//! The clock is passed in: [`crate::WallClock`] in production, [`crate::VirtualClock`] in tests.

mod inline;
mod metrics;
mod pipes;
mod stats;

pub use metrics::{render_prometheus, MetricsServer};
pub use pipes::{PipeHandle, PipeRuntime, PipeStage};
pub use stats::{
    PipeThreadStats, PortReport, PortRuntimeCounters, PortRuntimeStats, RuntimeStats,
    BATCH_BUCKETS, BATCH_BUCKET_LE,
};

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender, TrySendError};

use crate::link::{LinkConfig, LinkConfigError, LinkControl, LinkPort};
use crate::port::{Frame, FrameBatch, Port, PortError, StatsHandle};
use crate::time::{Clock, Nanos};
use pipes::{PipeHandle as Handle, RxBatch, Single};
use stats::{GlobalCounters, PipeThreadCounters};

/// Empty receives in a row after which an rx thread on a port without a descriptor starts
/// napping ([`NAP`] at a time) instead of polling again at once.
const SPIN_POLLS: u32 = 256;

/// How long a thread naps when it has ports without a descriptor to wait on.
const NAP: Duration = Duration::from_micros(20);

/// Device-port numbering is the model's ([`pipeline::devport`]).
pub use pipeline::devport::NUM_DEVPORTS;

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
    /// The pipeline thread (single-thread mode).
    Pipeline,
    /// The thread of one hardware pipe (per-pipe mode).
    Pipe(u16),
    /// The receive thread of a device port.
    Rx(u16),
    /// The transmit thread of a device port.
    Tx(u16),
}

/// Called first thing on every runtime thread (pinning it to a core, naming it in traces).
pub type ThreadHook = Arc<dyn Fn(ThreadRole) + Send + Sync>;

/// How frames move between ports and the pipeline thread(s).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum IoMode {
    /// Run to completion: each pipeline thread receives from its own ports, runs the frames
    /// and sends them itself (see the module documentation).
    #[default]
    Inline,
    /// An rx and a tx thread per port, bounded channels to and from the pipeline thread(s).
    Threads,
}

impl std::str::FromStr for IoMode {
    type Err = String;
    fn from_str(s: &str) -> Result<IoMode, String> {
        match s {
            "inline" => Ok(IoMode::Inline),
            "threads" => Ok(IoMode::Threads),
            _ => Err(format!("unknown I/O mode {s:?} (inline or threads)")),
        }
    }
}

impl std::fmt::Display for IoMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IoMode::Inline => "inline",
            IoMode::Threads => "threads",
        })
    }
}

/// Settings of a [`Runtime`].
#[derive(Clone)]
pub struct RuntimeConfig {
    /// Frames per receive / transmit batch.
    pub batch: usize,
    /// Batches the channel into the pipeline thread holds.
    pub ingress_channel: usize,
    /// Batches each port's transmit channel holds.
    pub egress_channel: usize,
    /// Batches of copies the channel into each pipe thread holds (per-pipe mode).
    pub cross_channel: usize,
    /// Longest wait of an idle thread before it checks for a stop or timed work.
    pub idle_wait: Duration,
    /// Inline mode: an idle pipeline thread keeps polling its ports, without sleeping, for
    /// this long after its last work (zero: it sleeps at once). Waking a sleeping thread costs
    /// a scheduler wake-up per frame (tens of µs on a VM's idle vCPU); polling trades a core
    /// for that latency, as a poll-mode driver does.
    pub busy_poll: Duration,
    /// How long [`Runtime::stop`] waits for link models to release held frames.
    pub drain_timeout: Duration,
    /// Run on every thread as it starts.
    pub thread_hook: Option<ThreadHook>,
    /// Run-to-completion or rx/tx threads.
    pub io: IoMode,
}

impl std::fmt::Debug for RuntimeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeConfig")
            .field("batch", &self.batch)
            .field("ingress_channel", &self.ingress_channel)
            .field("egress_channel", &self.egress_channel)
            .field("cross_channel", &self.cross_channel)
            .field("idle_wait", &self.idle_wait)
            .field("busy_poll", &self.busy_poll)
            .field("drain_timeout", &self.drain_timeout)
            .field("io", &self.io)
            .finish_non_exhaustive()
    }
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            batch: 32,
            ingress_channel: 1024,
            egress_channel: 1024,
            cross_channel: 1024,
            idle_wait: Duration::from_millis(20),
            busy_poll: Duration::ZERO,
            drain_timeout: Duration::from_secs(1),
            thread_hook: None,
            io: IoMode::default(),
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
    /// A switch runtime was started without a switch instance for a pipeline thread.
    #[error("no switch instance for a pipeline thread")]
    NoSwitch,
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
    /// No pipeline thread serves this pipe (or it is not 0..=3).
    #[error("no pipe thread runs pipe {0}")]
    NoSuchPipe(u16),
    /// Two stages for one pipe.
    #[error("pipe {0} is given twice")]
    DuplicatePipe(u16),
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
    /// Per pipeline thread: its pipe (`None`: the single whole-switch thread), its counters.
    threads: Vec<(Option<u16>, Arc<PipeThreadCounters>)>,
    /// The clock every timestamp comes from.
    clock: Arc<dyn Clock>,
}

/// A cloneable handle to a running [`Runtime`]: statistics, link control and control
/// requests run on the pipeline thread.
pub struct RuntimeHandle<P: Pipeline> {
    inner: Handle<Single<P>>,
}

impl<P: Pipeline> Clone for RuntimeHandle<P> {
    fn clone(&self) -> Self {
        RuntimeHandle {
            inner: self.inner.clone(),
        }
    }
}

impl<P: Pipeline> RuntimeHandle<P> {
    /// A snapshot of every port's counters and the runtime's own.
    pub fn stats(&self) -> RuntimeStats {
        self.inner.stats()
    }

    /// The device ports attached, in order.
    pub fn devports(&self) -> Vec<u16> {
        self.inner.devports()
    }

    /// Now on the runtime's clock (the time frames are stamped with).
    pub fn now(&self) -> Nanos {
        self.inner.now()
    }

    /// The link control of device port `devport`.
    pub fn link(&self, devport: u16) -> Result<LinkControl, RuntimeError> {
        self.inner.link(devport)
    }

    /// Runs `f` on the pipeline thread between two batches and returns its result, waiting at
    /// most `timeout`.
    pub fn call<R: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl FnOnce(&mut P) -> R + Send + 'static,
    ) -> Result<R, RuntimeError> {
        self.inner
            .call_pipe(0, timeout, move |s: &mut Single<P>| f(&mut s.0))
    }
}

/// The running switch with one pipeline thread. See the module documentation.
pub struct Runtime<P: Pipeline> {
    inner: PipeRuntime<Single<P>>,
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
        let inner = pipes::start_threads(vec![(None, Single(pipeline))], ports, clock, cfg)?;
        Ok(Runtime { inner })
    }

    /// A handle for statistics and control from other threads.
    pub fn handle(&self) -> RuntimeHandle<P> {
        RuntimeHandle {
            inner: self.inner.handle(),
        }
    }

    /// Stops receiving, drains the channels and link models, joins every thread and returns
    /// the pipeline and the final statistics.
    pub fn stop(self) -> Result<(P, RuntimeStats), RuntimeError> {
        let (stages, stats) = self.inner.stop()?;
        match stages.into_iter().next() {
            Some((_, Single(p))) => Ok((p, stats)),
            None => Err(RuntimeError::Stopped),
        }
    }
}

fn until(due: Option<Nanos>, now: Nanos, cap: Duration) -> Duration {
    match due {
        Some(d) => Duration::from(d - now).min(cap),
        None => cap,
    }
}

/// One non-blocking receive on `port` into `fb`, with the port's next timed event (the port's
/// lock is held for this one call only). Shared by the rx threads and the inline loop.
fn rx_receive(
    port: &SharedPort,
    fb: &mut FrameBatch,
    now: Nanos,
) -> (Result<usize, PortError>, Option<Nanos>) {
    let mut p = lock(port);
    let r = p.recv_batch(fb, now);
    (r, p.poll_timeout())
}

/// Moves the frames just received out of `fb` into `frames` and gives `fb` spare buffers from
/// `free` for the next receive.
fn take_frames(fb: &mut FrameBatch, frames: &mut Vec<Frame>, free: &FreeList) {
    let n = fb.len();
    for i in 0..n {
        let ts = fb.frames()[i].ts;
        if let Some(data) = fb.take_data(i) {
            frames.push(Frame { data, ts });
        }
    }
    fb.clear();
    free.refill(fb, n);
}

/// Sends `frames` (drained; the vector keeps its capacity) on `port` in batches of `fb`'s
/// capacity; the buffers the batch held before go to `free`. Shared by the tx threads and the
/// inline loop.
fn tx_send(
    port: &SharedPort,
    fb: &mut FrameBatch,
    frames: &mut Vec<Vec<u8>>,
    now: Nanos,
    counters: &PortRuntimeCounters,
    free: &FreeList,
) {
    let send = |fb: &mut FrameBatch| {
        counters.tx_batches.fetch_add(1, Ordering::Relaxed);
        if lock(port).send_batch(fb, now).is_err() {
            counters.io_errors.fetch_add(1, Ordering::Relaxed);
            fb.clear();
        }
    };
    for data in frames.drain(..) {
        let old = match fb.push_owned(data, now) {
            Ok(old) => old,
            Err(data) => {
                send(fb);
                // The batch is empty now, so this push succeeds.
                fb.push_owned(data, now).unwrap_or_default()
            }
        };
        if let Some(b) = old {
            free.give(b);
        }
    }
    if !fb.is_empty() {
        send(fb);
    }
}

/// Lets `port`'s link model release what is due at `now`; returns its next timed event.
fn flush_due(port: &SharedPort, now: Nanos, counters: &PortRuntimeCounters) -> Option<Nanos> {
    let mut p = lock(port);
    if p.poll_timeout().is_some_and(|d| d <= now) && p.flush(now).is_err() {
        counters.io_errors.fetch_add(1, Ordering::Relaxed);
    }
    p.poll_timeout()
}

/// Drain at stop: lets the link models of `ports` release what they hold, for at most `drain`
/// of real time.
fn drain_links<'a>(
    ports: impl Iterator<Item = &'a SharedPort> + Clone,
    clock: &dyn Clock,
    drain: Duration,
) {
    let start = Instant::now();
    loop {
        let now = clock.now();
        let mut next: Option<Nanos> = None;
        for port in ports.clone() {
            let mut p = lock(port);
            let _ = p.flush(now);
            if let Some(d) = p.poll_timeout() {
                next = Some(next.map_or(d, |n| n.min(d)));
            }
        }
        match next {
            None => break,
            Some(d) => {
                if start.elapsed() >= drain {
                    break;
                }
                std::thread::sleep(until(Some(d), now, Duration::from_millis(1)));
            }
        }
    }
}

/// Every 500 ms: backends that learn about drops from the kernel (AF_PACKET's ring
/// statistics) fold them into their counters when asked for a snapshot.
fn poll_port_stats<'a>(polled: &mut Instant, ports: impl Iterator<Item = &'a SharedPort>) {
    if polled.elapsed() >= Duration::from_millis(500) {
        *polled = Instant::now();
        for p in ports {
            let _ = lock(p).stats();
        }
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
    // Empty receives in a row on a port without a descriptor.
    let mut empty_polls = 0u32;
    while !stop.load(Ordering::Acquire) {
        poll_port_stats(&mut polled, std::iter::once(port));
        let now = clock.now();
        let (got, due) = rx_receive(port, &mut fb, now);
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
                    // No descriptor to wait on (DPDK, memory, pcap): poll again at once a
                    // few times (a poll-mode device has nothing to sleep on; frames arriving
                    // right after a burst are common), then nap briefly so an idle port does
                    // not hold a core.
                    None => {
                        empty_polls = empty_polls.saturating_add(1);
                        if empty_polls <= SPIN_POLLS {
                            std::thread::yield_now();
                        } else {
                            std::thread::sleep(wait.min(NAP));
                        }
                    }
                }
                continue;
            }
            Ok(n) => {
                empty_polls = 0;
                counters.rx_batch(n);
                let mut frames = Vec::with_capacity(n);
                take_frames(&mut fb, &mut frames, free);
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
                let n = counters.io_errors.fetch_add(1, Ordering::Relaxed) + 1;
                // Counted every time, logged at the 1st, 2nd, 4th, ... error (see inline.rs).
                if n.is_power_of_two() {
                    tracing::warn!(port = devport, error = %e, errors = n, "receive failed");
                }
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
    loop {
        let now = clock.now();
        let due = lock(port).poll_timeout();
        match chan.recv_timeout(until(due, now, idle)) {
            Ok(mut frames) => tx_send(port, &mut fb, &mut frames, clock.now(), counters, free),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        flush_due(port, clock.now(), counters);
    }
    drain_links(std::iter::once(port), clock, drain);
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

#[cfg(test)]
mod pipe_tests;
