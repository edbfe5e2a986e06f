//! The pipeline threads, for both modes of the runtime: one thread for a whole-switch
//! [`Pipeline`] ([`super::Runtime`]), or one thread per hardware pipe for a [`PipeStage`]
//! ([`PipeRuntime`]). Both run the same loop ([`worker_loop`], or in inline I/O mode the loop
//! of [`super::inline`], which shares its pieces: [`ingest`], [`take_copies`]); a whole-switch
//! pipeline is a stage that never hands a copy to another thread ([`Single`]).
//!
//! Per-pipe mode, as on the hardware: the rx thread of device port `p` hands its batches to the
//! thread of pipe `p >> 7`, which runs ingress (up to the traffic manager's enqueue). Copies
//! for ports of its own pipe are queued and egressed right there; copies for ports of another
//! pipe cross to that pipe's thread over a bounded channel (full → the copy is dropped and
//! counted in [`super::PipeThreadStats::cross_full`]), which runs queueing and egress. Frames
//! that leave go to the port's tx thread as before (inline I/O: the thread sends them on its
//! own ports itself, see [`super::inline`]). Each thread owns its stage, so the state a
//! stage keeps for its pipe (registers, counters, meters, queues) is touched by one thread only.
//!
//! Control requests go to one thread ([`PipeHandle::call_pipe`]) or to all
//! ([`PipeHandle::call_each`]; writes to symmetric state must reach every thread that holds a
//! copy of it, reads are merged by the caller). They run between batches.
//!
//! Stopping: once the rx threads are gone (inline: once it saw the stop), each thread finishes its ingress channel, then keeps
//! serving the copies other threads send it until every thread's ingress is done and no copy is
//! in flight anywhere (a shared count of copies sent but not yet processed), then exits.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Select, Sender, TrySendError};

use super::inline::{inline_loop, Doorbell, Inline, OwnedPort};
use super::stats::{snapshot_port, GlobalCounters, PipeThreadCounters};
use super::{
    lock, rx_loop, spawn, tx_loop, FreeList, IoMode, Pipeline, PortInfo, PortRuntimeCounters,
    PortSetup, RuntimeConfig, RuntimeError, RuntimeStats, Shared, SharedPort, ThreadRole,
    NUM_DEVPORTS,
};
use crate::link::LinkPort;
use crate::port::{Frame, Port};
use crate::time::{Clock, Nanos};

/// A pipeline split at the traffic manager, one instance per pipe thread. pisa's binary
/// implements it for a `Switch` (ingress up to the TM, then queue + egress); tests implement
/// small ones.
pub trait PipeStage: Send + 'static {
    /// A packet copy the TM queued for an egress port; crosses between pipe threads.
    type Copy: Send + 'static;

    /// The egress device port of `copy` (its pipe is `port >> 7`).
    fn copy_port(copy: &Self::Copy) -> u16;

    /// Ingress of one frame that arrived on `port` (a port of this stage's pipe) at `ts`.
    /// Frames that leave go to `out(egress devport, bytes)`; copies queued for egress are
    /// appended to `copies`.
    fn ingress(
        &mut self,
        port: u16,
        data: &[u8],
        ts: Nanos,
        out: &mut dyn FnMut(u16, Vec<u8>),
        copies: &mut Vec<Self::Copy>,
    );

    /// Queueing and egress of `copy`, whose port is on this stage's pipe. New copies (mirrors,
    /// recirculated passes) are appended to `copies`.
    fn egress(
        &mut self,
        copy: Self::Copy,
        out: &mut dyn FnMut(u16, Vec<u8>),
        copies: &mut Vec<Self::Copy>,
    );

    /// A copy that will not be egressed (dropped and counted by the runtime): take back its
    /// buffer.
    fn discard(&mut self, _copy: Self::Copy) {}

    /// Takes back the buffer of a frame that was received, for reuse.
    fn recycle(&mut self, _buf: Vec<u8>) {}
}

/// A whole-switch [`Pipeline`] as a stage that makes no copies (single-thread mode).
pub(crate) struct Single<P>(pub(crate) P);

impl<P: Pipeline> PipeStage for Single<P> {
    type Copy = Infallible;

    fn copy_port(copy: &Infallible) -> u16 {
        match *copy {}
    }

    fn ingress(
        &mut self,
        port: u16,
        data: &[u8],
        ts: Nanos,
        out: &mut dyn FnMut(u16, Vec<u8>),
        _copies: &mut Vec<Infallible>,
    ) {
        self.0.process(port, data, ts, out);
    }

    fn egress(
        &mut self,
        copy: Infallible,
        _: &mut dyn FnMut(u16, Vec<u8>),
        _: &mut Vec<Infallible>,
    ) {
        match copy {}
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        self.0.recycle(buf);
    }
}

/// A batch of frames received on one device port.
pub(crate) struct RxBatch {
    pub(crate) port: u16,
    pub(crate) frames: Vec<Frame>,
}

pub(super) type Control<S> = Box<dyn FnOnce(&mut S) + Send>;

/// Transmit channel per device port (`None`: nothing attached).
type TxChannels = Arc<[Option<Sender<Vec<Vec<u8>>>>]>;

/// One pipeline thread as seen from handles.
struct WorkerInfo<S> {
    /// The pipe it runs (`None`: the single whole-switch thread).
    pipe: Option<u16>,
    control: Sender<Control<S>>,
    /// Wakes the thread when it sleeps on its ports (inline mode).
    bell: Option<Arc<Doorbell>>,
}

/// A cloneable handle to a running [`PipeRuntime`]: statistics, link control and control
/// requests run on the pipe threads.
pub struct PipeHandle<S: PipeStage> {
    shared: Arc<Shared>,
    workers: Arc<[WorkerInfo<S>]>,
}

impl<S: PipeStage> Clone for PipeHandle<S> {
    fn clone(&self) -> Self {
        PipeHandle {
            shared: self.shared.clone(),
            workers: self.workers.clone(),
        }
    }
}

impl<S: PipeStage> PipeHandle<S> {
    /// A snapshot of every port's counters, every pipe thread's and the runtime's own.
    pub fn stats(&self) -> RuntimeStats {
        self.shared.snapshot()
    }

    /// The device ports attached, in order.
    pub fn devports(&self) -> Vec<u16> {
        self.shared.ports.iter().map(|p| p.devport).collect()
    }

    /// Now on the runtime's clock (the time frames are stamped with).
    pub fn now(&self) -> Nanos {
        self.shared.clock.now()
    }

    /// The pipes that have a thread, in order (empty in single-thread mode).
    pub fn pipes(&self) -> Vec<u16> {
        self.workers.iter().filter_map(|w| w.pipe).collect()
    }

    /// The link control of device port `devport`.
    pub fn link(&self, devport: u16) -> Result<crate::link::LinkControl, RuntimeError> {
        self.shared.link(devport)
    }

    fn send_job<R: Send + 'static>(
        &self,
        w: &WorkerInfo<S>,
        timeout: Duration,
        f: impl FnOnce(&mut S) -> R + Send + 'static,
    ) -> Result<Receiver<R>, RuntimeError> {
        let (tx, rx) = bounded(1);
        let job: Control<S> = Box::new(move |s| {
            let _ = tx.send(f(s));
        });
        w.control
            .send_timeout(job, timeout)
            .map_err(|_| RuntimeError::Stopped)?;
        if let Some(b) = &w.bell {
            b.ring();
        }
        Ok(rx)
    }

    fn answer<R>(rx: &Receiver<R>, timeout: Duration) -> Result<R, RuntimeError> {
        match rx.recv_timeout(timeout) {
            Ok(r) => Ok(r),
            Err(RecvTimeoutError::Timeout) => Err(RuntimeError::Timeout(timeout)),
            Err(RecvTimeoutError::Disconnected) => Err(RuntimeError::Stopped),
        }
    }

    /// Runs `f` on the thread of `pipe` between two batches and returns its result, waiting at
    /// most `timeout`. In single-thread mode every pipe is the one thread.
    pub fn call_pipe<R: Send + 'static>(
        &self,
        pipe: u16,
        timeout: Duration,
        f: impl FnOnce(&mut S) -> R + Send + 'static,
    ) -> Result<R, RuntimeError> {
        let w = self
            .workers
            .iter()
            .find(|w| w.pipe.is_none_or(|p| p == pipe))
            .ok_or(RuntimeError::NoSuchPipe(pipe))?;
        let rx = self.send_job(w, timeout, f)?;
        Self::answer(&rx, timeout)
    }

    /// Runs `f` on every pipe thread (all at once) and returns each thread's pipe (`None` for
    /// the single whole-switch thread) with its result, in thread order.
    pub fn call_each<R: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl Fn(&mut S) -> R + Send + Sync + 'static,
    ) -> Result<Vec<(Option<u16>, R)>, RuntimeError> {
        let f = Arc::new(f);
        let mut pending = Vec::with_capacity(self.workers.len());
        for w in self.workers.iter() {
            let f = f.clone();
            pending.push((w.pipe, self.send_job(w, timeout, move |s| f(s))?));
        }
        pending
            .into_iter()
            .map(|(pipe, rx)| Ok((pipe, Self::answer(&rx, timeout)?)))
            .collect()
    }
}

/// Copies sent between threads but not yet processed, and threads still reading ingress: the
/// stop condition (see the module documentation).
#[derive(Default)]
pub(super) struct Quiesce {
    pub(super) ingress_open: AtomicUsize,
    pub(super) in_flight: AtomicUsize,
}

/// The running switch with one thread per pipe that has ports. See the module documentation.
pub struct PipeRuntime<S: PipeStage> {
    handle: PipeHandle<S>,
    stop_rx: Arc<AtomicBool>,
    rx_threads: Vec<(String, JoinHandle<()>)>,
    tx_threads: Vec<(String, JoinHandle<()>)>,
    workers: Vec<(String, JoinHandle<S>)>,
}

pub(super) use pipeline::devport::pipe_of;

impl<S: PipeStage> PipeRuntime<S> {
    /// Starts one thread per pipe that has a port in `ports`; `stage(pipe)` builds each
    /// thread's stage. `clock` gives every timestamp.
    pub fn start(
        mut stage: impl FnMut(u16) -> S,
        ports: Vec<PortSetup>,
        clock: Arc<dyn Clock>,
        cfg: RuntimeConfig,
    ) -> Result<PipeRuntime<S>, RuntimeError> {
        let mut pipes: Vec<u16> = ports.iter().map(|p| pipe_of(p.devport)).collect();
        pipes.sort_unstable();
        pipes.dedup();
        let stages = pipes.into_iter().map(|p| (p, stage(p))).collect();
        PipeRuntime::start_stages(stages, ports, clock, cfg)
    }

    /// Starts one thread per `(pipe, stage)` given; every port's pipe needs one
    /// ([`RuntimeError::NoSuchPipe`] otherwise). A pipe may have a thread without ports of its
    /// own: it then egresses the copies other pipes make for its (unattached) ports, which end
    /// up counted in [`RuntimeStats::no_port`], and runs recirculations on its loopback ports.
    pub fn start_stages(
        stages: Vec<(u16, S)>,
        ports: Vec<PortSetup>,
        clock: Arc<dyn Clock>,
        cfg: RuntimeConfig,
    ) -> Result<PipeRuntime<S>, RuntimeError> {
        let mut seen = [false; 4];
        for (p, _) in &stages {
            let slot = seen
                .get_mut(*p as usize)
                .ok_or(RuntimeError::NoSuchPipe(*p))?;
            if *slot {
                return Err(RuntimeError::DuplicatePipe(*p));
            }
            *slot = true;
        }
        let stages = stages.into_iter().map(|(p, s)| (Some(p), s)).collect();
        start_threads(stages, ports, clock, cfg)
    }

    /// A handle for statistics and control from other threads.
    pub fn handle(&self) -> PipeHandle<S> {
        self.handle.clone()
    }

    /// Wakes pipeline threads sleeping on their ports (inline mode) to see the stop.
    fn wake_all(&self) {
        for w in self.handle.workers.iter() {
            if let Some(b) = &w.bell {
                b.ring();
            }
        }
    }

    /// Stops receiving, drains the channels between threads and the link models, joins every
    /// thread and returns each pipe's stage (with its pipe) and the final statistics.
    #[allow(clippy::type_complexity)]
    pub fn stop(mut self) -> Result<(Vec<(Option<u16>, S)>, RuntimeStats), RuntimeError> {
        self.stop_rx.store(true, Ordering::Release);
        self.wake_all();
        let mut first_err = None;
        for (name, h) in self.rx_threads.drain(..) {
            if h.join().is_err() {
                first_err.get_or_insert(RuntimeError::Panicked(name));
            }
        }
        let pipes: Vec<Option<u16>> = self.handle.workers.iter().map(|w| w.pipe).collect();
        let mut stages = Vec::new();
        for ((name, h), pipe) in self.workers.drain(..).zip(pipes) {
            match h.join() {
                Ok(s) => stages.push((pipe, s)),
                Err(_) => {
                    first_err.get_or_insert(RuntimeError::Panicked(name));
                }
            }
        }
        for (name, h) in self.tx_threads.drain(..) {
            if h.join().is_err() {
                first_err.get_or_insert(RuntimeError::Panicked(name));
            }
        }
        let stats = self.handle.stats();
        match first_err {
            None => Ok((stages, stats)),
            Some(e) => Err(e),
        }
    }
}

impl<S: PipeStage> Drop for PipeRuntime<S> {
    fn drop(&mut self) {
        // Dropped without `stop`: still end the threads.
        self.stop_rx.store(true, Ordering::Release);
        self.wake_all();
        for (_, h) in self.rx_threads.drain(..) {
            let _ = h.join();
        }
        for (_, h) in self.workers.drain(..) {
            let _ = h.join();
        }
        for (_, h) in self.tx_threads.drain(..) {
            let _ = h.join();
        }
    }
}

/// Opens the ports' link models, then starts the tx, pipeline and rx threads. `stages` lists
/// the pipeline threads: `(Some(pipe), stage)` serves the ports of one pipe; a single
/// `(None, stage)` serves every port.
pub(crate) fn start_threads<S: PipeStage>(
    stages: Vec<(Option<u16>, S)>,
    ports: Vec<PortSetup>,
    clock: Arc<dyn Clock>,
    cfg: RuntimeConfig,
) -> Result<PipeRuntime<S>, RuntimeError> {
    if ports.is_empty() {
        return Err(RuntimeError::NoPorts);
    }
    let mut seen = vec![false; NUM_DEVPORTS];
    let mut infos = Vec::new();
    let mut shared_ports: Vec<SharedPort> = Vec::new();
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
    // Which thread serves each device port (ingress of its frames, egress of its copies).
    let mut route: Vec<Option<usize>> = vec![None; NUM_DEVPORTS];
    for (t, (pipe, _)) in stages.iter().enumerate() {
        for (d, r) in route.iter_mut().enumerate() {
            if pipe.is_none_or(|p| p == pipe_of(d as u16)) && r.is_none() {
                *r = Some(t);
            }
        }
    }
    for info in &infos {
        if route[info.devport as usize].is_none() {
            return Err(RuntimeError::NoSuchPipe(pipe_of(info.devport)));
        }
    }
    let shared = Arc::new(Shared {
        ports: infos,
        global: GlobalCounters::default(),
        threads: stages
            .iter()
            .map(|(pipe, _)| (*pipe, Arc::new(PipeThreadCounters::default())))
            .collect(),
        clock: clock.clone(),
    });
    let route: Arc<[Option<usize>]> = route.into();
    let batch = cfg.batch.max(1);
    let stop_rx = Arc::new(AtomicBool::new(false));
    let free = FreeList::new(4096);
    let quiesce = Arc::new(Quiesce::default());
    quiesce.ingress_open.store(stages.len(), Ordering::SeqCst);

    let n = stages.len();
    let inline = cfg.io == IoMode::Inline;
    let mut ing = Vec::with_capacity(n);
    let mut cross_tx = Vec::with_capacity(n);
    let mut cross_rx = Vec::with_capacity(n);
    let mut ctl = Vec::with_capacity(n);
    let mut infos_w = Vec::with_capacity(n);
    let mut bells = Vec::with_capacity(n);
    for (pipe, _) in &stages {
        ing.push(bounded::<RxBatch>(cfg.ingress_channel.max(1)));
        let (ct, cr) = bounded::<Vec<S::Copy>>(cfg.cross_channel.max(1));
        cross_tx.push(ct);
        cross_rx.push(cr);
        let (kt, kr) = bounded::<Control<S>>(64);
        ctl.push(kr);
        let bell = if inline {
            Some(Arc::new(Doorbell::new().map_err(|source| {
                RuntimeError::Spawn {
                    name: "doorbell".to_string(),
                    source,
                }
            })?))
        } else {
            None
        };
        bells.push(bell.clone());
        infos_w.push(WorkerInfo {
            pipe: *pipe,
            control: kt,
            bell,
        });
    }
    let cross_tx: Arc<[Sender<Vec<S::Copy>>]> = cross_tx.into();
    let bells: Arc<[Option<Arc<Doorbell>>]> = bells.into();

    // Transmit channel per port: read by its tx thread, or (inline) by the thread that owns it.
    let mut egress: Vec<Option<Sender<Vec<Vec<u8>>>>> = vec![None; NUM_DEVPORTS];
    let mut owned: Vec<Vec<OwnedPort>> = (0..n).map(|_| Vec::new()).collect();
    let mut tx_threads = Vec::new();
    for (i, port) in shared_ports.iter().enumerate() {
        let info = &shared.ports[i];
        let devport = info.devport;
        let (etx, erx) = bounded::<Vec<Vec<u8>>>(cfg.egress_channel.max(1));
        egress[devport as usize] = Some(etx);
        if inline {
            if let Some(t) = route[devport as usize] {
                let fd = lock(port).raw_fd();
                owned[t].push(OwnedPort::new(
                    devport,
                    port.clone(),
                    fd,
                    info.counters.clone(),
                    erx,
                    batch,
                    &free,
                ));
            }
            continue;
        }
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
    let egress: TxChannels = egress.into();

    let mut workers = Vec::with_capacity(n);
    for (t, (((pipe, stage), ((_, ing_rx), (cross_rx, ctl_rx))), owned)) in stages
        .into_iter()
        .zip(ing.iter().cloned().zip(cross_rx.into_iter().zip(ctl)))
        .zip(owned)
        .enumerate()
    {
        let (name, role) = match pipe {
            Some(p) => (format!("pisa-pipe{p}"), ThreadRole::Pipe(p)),
            None => ("pisa-pipeline".to_string(), ThreadRole::Pipeline),
        };
        let w = Wiring {
            me: t,
            route: route.clone(),
            cross: cross_tx.clone(),
            egress: egress.clone(),
            shared: shared.clone(),
            quiesce: quiesce.clone(),
            bells: bells.clone(),
        };
        let hook = cfg.thread_hook.clone();
        if inline {
            let ctx = Inline {
                ports: owned,
                clock: clock.clone(),
                stop: stop_rx.clone(),
                bell: bells[t].clone(),
                idle: cfg.idle_wait,
                busy_poll: cfg.busy_poll,
                drain: cfg.drain_timeout,
                free: free.clone(),
            };
            workers.push(spawn(name, move || {
                if let Some(h) = hook {
                    h(role);
                }
                inline_loop(stage, &cross_rx, &ctl_rx, &w, ctx)
            })?);
        } else {
            workers.push(spawn(name, move || {
                if let Some(h) = hook {
                    h(role);
                }
                worker_loop(stage, &ing_rx, &cross_rx, &ctl_rx, &w)
            })?);
        }
    }

    let mut rx_threads = Vec::new();
    for (i, port) in shared_ports.iter().enumerate() {
        if inline {
            break;
        }
        let info = &shared.ports[i];
        let devport = info.devport;
        let fd = lock(port).raw_fd();
        let Some(t) = route[devport as usize] else {
            continue;
        };
        let port = port.clone();
        let clock = clock.clone();
        let counters = info.counters.clone();
        let to = ing[t].0.clone();
        let stop = stop_rx.clone();
        let hook = cfg.thread_hook.clone();
        let idle = cfg.idle_wait;
        let free = free.clone();
        rx_threads.push(spawn(format!("pisa-rx{devport}"), move || {
            if let Some(h) = hook {
                h(ThreadRole::Rx(devport));
            }
            rx_loop(
                devport, &port, fd, &*clock, &counters, &to, &stop, batch, idle, &free,
            );
        })?);
    }
    // Only the rx threads hold ingress senders now: when they end, ingress ends.
    drop(ing);
    Ok(PipeRuntime {
        handle: PipeHandle {
            shared,
            workers: infos_w.into(),
        },
        stop_rx,
        rx_threads,
        tx_threads,
        workers,
    })
}

/// What a pipeline thread is connected to.
pub(super) struct Wiring<C> {
    pub(super) me: usize,
    /// Thread index per device port.
    pub(super) route: Arc<[Option<usize>]>,
    /// Copy channel of every thread (own one included, so none ever disconnects early).
    pub(super) cross: Arc<[Sender<Vec<C>>]>,
    /// Transmit channel per device port.
    pub(super) egress: TxChannels,
    pub(super) shared: Arc<Shared>,
    pub(super) quiesce: Arc<Quiesce>,
    /// Per thread, what wakes it when it sleeps on its ports (inline mode only).
    pub(super) bells: Arc<[Option<Arc<Doorbell>>]>,
}

impl<C> Wiring<C> {
    fn ring(&self, t: usize) {
        if let Some(Some(b)) = self.bells.get(t) {
            b.ring();
        }
    }
}

/// A pipeline thread's working buffers.
pub(super) struct Work<C> {
    /// Frames leaving per egress port, gathered over one batch.
    out: Vec<Vec<Vec<u8>>>,
    touched: Vec<u16>,
    /// Frames sent to a device port out of range.
    bad_port: u64,
    /// Copies just made, copies for this thread, copies per other thread.
    copies: Vec<C>,
    local: VecDeque<C>,
    remote: Vec<Vec<C>>,
    /// The thread's own counters, and every device port's runtime counters.
    pub(super) counters: Arc<PipeThreadCounters>,
    out_counters: Vec<Option<Arc<PortRuntimeCounters>>>,
}

impl<C> Work<C> {
    pub(super) fn new(w: &Wiring<C>) -> Work<C> {
        Work {
            out: vec![Vec::new(); NUM_DEVPORTS],
            touched: Vec::new(),
            bad_port: 0,
            copies: Vec::new(),
            local: VecDeque::new(),
            remote: (0..w.cross.len()).map(|_| Vec::new()).collect(),
            counters: w.shared.threads[w.me].1.clone(),
            out_counters: (0..NUM_DEVPORTS as u16)
                .map(|d| {
                    w.shared
                        .ports
                        .iter()
                        .find(|p| p.devport == d)
                        .map(|p| p.counters.clone())
                })
                .collect(),
        }
    }

    fn emit(&mut self) -> impl FnMut(u16, Vec<u8>) + '_ {
        |port, bytes| match self.out.get_mut(port as usize) {
            Some(q) => {
                if q.is_empty() {
                    self.touched.push(port);
                }
                q.push(bytes);
            }
            None => self.bad_port += 1,
        }
    }
}

fn route_copies<S: PipeStage>(stage: &mut S, w: &Wiring<S::Copy>, work: &mut Work<S::Copy>) {
    for c in work.copies.drain(..) {
        match w.route.get(S::copy_port(&c) as usize).copied().flatten() {
            Some(t) if t == w.me => work.local.push_back(c),
            Some(t) => work.remote[t].push(c),
            None => {
                stage.discard(c);
                w.shared.global.no_port.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Egress of every copy for this thread's pipe, including the ones those egresses make.
fn run_local<S: PipeStage>(stage: &mut S, w: &Wiring<S::Copy>, work: &mut Work<S::Copy>) {
    route_copies(stage, w, work);
    while let Some(c) = work.local.pop_front() {
        let mut copies = std::mem::take(&mut work.copies);
        stage.egress(c, &mut work.emit(), &mut copies);
        work.copies = copies;
        route_copies(stage, w, work);
    }
}

/// Sends a port's frames on the spot when the calling thread owns the port (inline mode):
/// returns true when it took them (draining the vector), false to use the port's channel.
pub(super) type LocalTx<'a> = &'a mut dyn FnMut(u16, &mut Vec<Vec<u8>>) -> bool;

/// Sends the copies for other threads and the frames that leave: to `local` first, else to
/// the port's transmit channel.
fn flush<S: PipeStage>(
    stage: &mut S,
    w: &Wiring<S::Copy>,
    work: &mut Work<S::Copy>,
    local: LocalTx<'_>,
) {
    let counters = &work.counters;
    for t in 0..work.remote.len() {
        if work.remote[t].is_empty() {
            continue;
        }
        let copies = std::mem::take(&mut work.remote[t]);
        let n = copies.len();
        // Counted before it is visible to the receiver, which subtracts it once processed.
        w.quiesce.in_flight.fetch_add(n, Ordering::SeqCst);
        match w.cross[t].try_send(copies) {
            Ok(()) => {
                counters.copies_out.fetch_add(n as u64, Ordering::Relaxed);
                w.ring(t);
            }
            Err(TrySendError::Full(v)) | Err(TrySendError::Disconnected(v)) => {
                w.quiesce.in_flight.fetch_sub(n, Ordering::SeqCst);
                counters.cross_full.fetch_add(n as u64, Ordering::Relaxed);
                for c in v {
                    stage.discard(c);
                }
            }
        }
    }
    if work.bad_port > 0 {
        w.shared
            .global
            .no_port
            .fetch_add(std::mem::take(&mut work.bad_port), Ordering::Relaxed);
    }
    for port in work.touched.drain(..) {
        let q = &mut work.out[port as usize];
        if local(port, q) {
            continue;
        }
        let frames = std::mem::take(q);
        let n = frames.len() as u64;
        match &w.egress[port as usize] {
            Some(s) => match s.try_send(frames) {
                Ok(()) => {
                    if let Some(t) = w.route[port as usize] {
                        w.ring(t);
                    }
                }
                Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                    if let Some(c) = &work.out_counters[port as usize] {
                        c.egress_full.fetch_add(n, Ordering::Relaxed);
                    }
                }
            },
            None => {
                w.shared.global.no_port.fetch_add(n, Ordering::Relaxed);
            }
        }
    }
}

/// Runs a batch received on `port` through the stage (draining `frames`, whose buffers go
/// back to the stage) and sends what leaves.
pub(super) fn ingest<S: PipeStage>(
    stage: &mut S,
    w: &Wiring<S::Copy>,
    work: &mut Work<S::Copy>,
    port: u16,
    frames: &mut Vec<Frame>,
    local: LocalTx<'_>,
) {
    for f in frames.iter() {
        let mut copies = std::mem::take(&mut work.copies);
        stage.ingress(port, &f.data, f.ts, &mut work.emit(), &mut copies);
        work.copies = copies;
        run_local(stage, w, work);
    }
    let n = frames.len() as u64;
    work.counters.batches.fetch_add(1, Ordering::Relaxed);
    work.counters.frames.fetch_add(n, Ordering::Relaxed);
    w.shared.global.processed.fetch_add(n, Ordering::Relaxed);
    for f in frames.drain(..) {
        stage.recycle(f.data);
    }
    flush(stage, w, work, local);
}

/// Queueing and egress of copies another pipe thread sent, then sends what leaves.
pub(super) fn take_copies<S: PipeStage>(
    stage: &mut S,
    w: &Wiring<S::Copy>,
    work: &mut Work<S::Copy>,
    copies: Vec<S::Copy>,
    local: LocalTx<'_>,
) {
    let n = copies.len();
    work.copies.extend(copies);
    run_local(stage, w, work);
    work.counters
        .copies_in
        .fetch_add(n as u64, Ordering::Relaxed);
    flush(stage, w, work, local);
    w.quiesce.in_flight.fetch_sub(n, Ordering::SeqCst);
}

/// One pipeline thread: ingress batches from its ports' rx threads, copies from other pipe
/// threads, control requests; until stopped and quiet (see the module documentation).
fn worker_loop<S: PipeStage>(
    mut stage: S,
    ing: &Receiver<RxBatch>,
    cross: &Receiver<Vec<S::Copy>>,
    ctl: &Receiver<Control<S>>,
    w: &Wiring<S::Copy>,
) -> S {
    let mut work = Work::new(w);
    let mut no_local = |_: u16, _: &mut Vec<Vec<u8>>| false;
    let mut ing_open = true;
    let mut ctl_open = true;
    loop {
        if !ing_open
            && w.quiesce.ingress_open.load(Ordering::SeqCst) == 0
            && w.quiesce.in_flight.load(Ordering::SeqCst) == 0
        {
            break;
        }
        let mut sel = Select::new();
        let i_ing = if ing_open { Some(sel.recv(ing)) } else { None };
        let i_cross = sel.recv(cross);
        let i_ctl = if ctl_open { Some(sel.recv(ctl)) } else { None };
        let op = if ing_open {
            sel.select()
        } else {
            // Draining: wake up now and then to see whether everyone is done.
            match sel.select_timeout(Duration::from_millis(1)) {
                Ok(op) => op,
                Err(_) => continue,
            }
        };
        let i = op.index();
        if Some(i) == i_ing {
            match op.recv(ing) {
                Ok(mut batch) => ingest(
                    &mut stage,
                    w,
                    &mut work,
                    batch.port,
                    &mut batch.frames,
                    &mut no_local,
                ),
                Err(_) => {
                    ing_open = false;
                    w.quiesce.ingress_open.fetch_sub(1, Ordering::SeqCst);
                }
            }
        } else if i == i_cross {
            // Every thread holds every copy sender, so this channel never disconnects.
            if let Ok(copies) = op.recv(cross) {
                take_copies(&mut stage, w, &mut work, copies, &mut no_local);
            }
        } else if Some(i) == i_ctl {
            match op.recv(ctl) {
                Ok(job) => job(&mut stage),
                Err(_) => ctl_open = false,
            }
        }
        // Control requests also get a turn while traffic is heavy.
        while let Ok(job) = ctl.try_recv() {
            job(&mut stage);
        }
    }
    // Late control requests are refused by dropping them (their callers see `Stopped`).
    stage
}

impl Shared {
    pub(crate) fn snapshot(&self) -> RuntimeStats {
        RuntimeStats {
            ports: self
                .ports
                .iter()
                .map(|p| {
                    snapshot_port(
                        p.devport,
                        &p.name,
                        p.stats.snapshot(),
                        &p.counters,
                        (p.link.tx_stats(), p.link.rx_stats()),
                    )
                })
                .collect(),
            no_port: self.global.no_port.load(Ordering::Relaxed),
            processed: self.global.processed.load(Ordering::Relaxed),
            threads: self
                .threads
                .iter()
                .map(|(pipe, c)| c.snapshot(*pipe))
                .collect(),
        }
    }

    pub(crate) fn link(&self, devport: u16) -> Result<crate::link::LinkControl, RuntimeError> {
        self.ports
            .iter()
            .find(|p| p.devport == devport)
            .map(|p| p.link.clone())
            .ok_or(RuntimeError::NoSuchPort(devport))
    }
}
