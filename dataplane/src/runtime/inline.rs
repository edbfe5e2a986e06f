//! Run-to-completion I/O ([`super::IoMode::Inline`]): each pipeline thread receives from its
//! own ports, runs the frames through its stage and sends what leaves on its own ports itself,
//! so a frame crosses no thread on its way through the switch.
//!
//! A thread owns the ports its pipe serves (every port in single-thread mode). Per turn it
//! runs control requests, receives one batch from each owned port (round robin, non-blocking),
//! takes copies other pipe threads sent it, sends frames other threads queued for its ports
//! (their bounded transmit channels, as in threaded mode: full → counted drop), and lets each
//! port's link model release what is due. The pieces are the threaded loops' own
//! ([`super::rx_receive`], [`super::tx_send`], [`super::flush_due`], [`super::drain_links`],
//! [`super::pipes::ingest`]).
//!
//! Idle, a thread sleeps in one `ppoll` over its ports' descriptors and its [`Doorbell`], an
//! eventfd that handles, other threads' copies and frames for its ports ring when it sleeps;
//! ports without a descriptor (DPDK, memory) make it poll again a few times, then nap briefly.
//! With [`super::RuntimeConfig::busy_poll`] it first keeps polling for that long after its
//! last work, as a poll-mode driver does.
//!
//! Stopping: the thread stops receiving, then serves copies and transmit channels until every
//! thread has stopped receiving and nothing is in flight (as in threaded mode), then lets its
//! ports' link models release held frames (up to the drain timeout).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use super::pipes::{ingest, take_copies, Control, PipeStage, Wiring, Work};
use super::{
    drain_links, flush_due, lock, poll_port_stats, rx_receive, take_frames, tx_send, until,
    FreeList, PortRuntimeCounters, SharedPort, NAP, NUM_DEVPORTS, SPIN_POLLS,
};
use crate::port::{Frame, FrameBatch, Port};
use crate::time::{Clock, Nanos};

/// Wakes a pipeline thread that sleeps on its ports: an eventfd written only while the thread
/// says it is asleep, so a busy thread costs its senders no system call.
pub(crate) struct Doorbell {
    fd: OwnedFd,
    asleep: AtomicBool,
}

impl Doorbell {
    pub(super) fn new() -> std::io::Result<Doorbell> {
        // SAFETY: eventfd takes no pointers; a negative result is checked below.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Doorbell {
            // SAFETY: `fd` is a fresh descriptor that nothing else owns.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            asleep: AtomicBool::new(false),
        })
    }

    /// Wakes the thread if it sleeps (call after making work visible to it).
    pub(super) fn ring(&self) {
        fence(Ordering::SeqCst);
        if self.asleep.load(Ordering::SeqCst) {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a live u64 to our own eventfd; a failure (counter
            // full) still leaves the eventfd readable, which is all a wake-up needs.
            let _ = unsafe {
                libc::write(
                    self.fd.as_raw_fd(),
                    (&one as *const u64).cast(),
                    std::mem::size_of::<u64>(),
                )
            };
        }
    }

    /// Sleeps until one of `fds` is readable, the bell rings or `timeout` passes, unless
    /// `has_work` (checked after announcing the sleep, so no ring is lost) says otherwise.
    /// Returns false when `ppoll` failed.
    fn sleep(
        &self,
        fds: &mut Vec<libc::pollfd>,
        timeout: Duration,
        has_work: impl Fn() -> bool,
    ) -> bool {
        self.asleep.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        let mut ok = true;
        if !has_work() {
            fds.push(libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
            let ts = libc::timespec {
                tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
                tv_nsec: timeout.subsec_nanos() as libc::c_long,
            };
            // SAFETY: `fds` is a valid array of `fds.len()` initialised pollfds and `ts` a valid
            // timespec, both living across the call; no signal mask is passed.
            let rc = unsafe {
                libc::ppoll(
                    fds.as_mut_ptr(),
                    fds.len() as libc::nfds_t,
                    &ts,
                    std::ptr::null(),
                )
            };
            if rc < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                ok = false;
            }
            let rang = fds.pop().is_some_and(|p| p.revents & libc::POLLIN != 0);
            if rang {
                let mut v: u64 = 0;
                // SAFETY: reads at most 8 bytes into a live u64 from our own non-blocking
                // eventfd (resetting it); an error (nothing to read) is harmless.
                let _ = unsafe {
                    libc::read(
                        self.fd.as_raw_fd(),
                        (&mut v as *mut u64).cast(),
                        std::mem::size_of::<u64>(),
                    )
                };
            }
        }
        self.asleep.store(false, Ordering::SeqCst);
        ok
    }
}

/// A port a pipeline thread owns in inline mode.
pub(super) struct OwnedPort {
    devport: u16,
    port: SharedPort,
    fd: Option<RawFd>,
    counters: Arc<PortRuntimeCounters>,
    /// Frames other threads queued for this port.
    egress: Receiver<Vec<Vec<u8>>>,
    rx: FrameBatch,
    tx: FrameBatch,
}

impl OwnedPort {
    pub(super) fn new(
        devport: u16,
        port: SharedPort,
        fd: Option<RawFd>,
        counters: Arc<PortRuntimeCounters>,
        egress: Receiver<Vec<Vec<u8>>>,
        batch: usize,
        free: &FreeList,
    ) -> OwnedPort {
        let mut rx = FrameBatch::new(batch);
        free.refill(&mut rx, batch);
        OwnedPort {
            devport,
            port,
            fd,
            counters,
            egress,
            rx,
            tx: FrameBatch::new(batch),
        }
    }
}

/// What an inline pipeline thread works with besides its stage and wiring.
pub(super) struct Inline {
    pub(super) ports: Vec<OwnedPort>,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) bell: Option<Arc<Doorbell>>,
    pub(super) idle: Duration,
    /// Keep polling this long after the last work before sleeping.
    pub(super) busy_poll: Duration,
    pub(super) drain: Duration,
    pub(super) free: FreeList,
}

/// Sends `frames` for `devport` right away when this thread owns the port.
fn send_local(
    ports: &mut [OwnedPort],
    index: &[Option<usize>],
    devport: u16,
    frames: &mut Vec<Vec<u8>>,
    now: Nanos,
    free: &FreeList,
) -> bool {
    match index.get(devport as usize).copied().flatten() {
        Some(i) => {
            let p = &mut ports[i];
            tx_send(&p.port, &mut p.tx, frames, now, &p.counters, free);
            true
        }
        None => false,
    }
}

/// Sends what other threads queued for the owned ports; returns whether there was any.
fn serve_egress(ports: &mut [OwnedPort], now: Nanos, free: &FreeList) -> bool {
    let mut any = false;
    for p in ports.iter_mut() {
        while let Ok(mut frames) = p.egress.try_recv() {
            any = true;
            tx_send(&p.port, &mut p.tx, &mut frames, now, &p.counters, free);
        }
    }
    any
}

/// One pipeline thread in inline mode (see the module documentation).
pub(super) fn inline_loop<S: PipeStage>(
    mut stage: S,
    cross: &Receiver<Vec<S::Copy>>,
    ctl: &Receiver<Control<S>>,
    w: &Wiring<S::Copy>,
    ctx: Inline,
) -> S {
    let Inline {
        mut ports,
        clock,
        stop,
        bell,
        idle,
        busy_poll,
        drain,
        free,
    } = ctx;
    let mut work = Work::new(w);
    let mut index: Vec<Option<usize>> = vec![None; NUM_DEVPORTS];
    for (i, p) in ports.iter().enumerate() {
        index[p.devport as usize] = Some(i);
    }
    let no_fd = ports.iter().any(|p| p.fd.is_none());
    let mut pollfds: Vec<libc::pollfd> = Vec::with_capacity(ports.len() + 1);
    let mut frames: Vec<Frame> = Vec::new();
    let mut polled = Instant::now();
    let mut empty_polls = 0u32;
    let mut receiving = true;
    let mut last_work = Instant::now();
    loop {
        while let Ok(job) = ctl.try_recv() {
            job(&mut stage);
        }
        if receiving && stop.load(Ordering::Acquire) {
            receiving = false;
            w.quiesce.ingress_open.fetch_sub(1, Ordering::SeqCst);
        }
        let mut busy = false;
        if receiving {
            poll_port_stats(&mut polled, ports.iter().map(|p| &p.port));
            for i in 0..ports.len() {
                let now = clock.now();
                let p = &mut ports[i];
                let (got, _) = rx_receive(&p.port, &mut p.rx, now);
                match got {
                    Ok(0) => {}
                    Ok(n) => {
                        busy = true;
                        p.counters.rx_batch(n);
                        take_frames(&mut p.rx, &mut frames, &free);
                        let devport = p.devport;
                        let now = clock.now();
                        ingest(
                            &mut stage,
                            w,
                            &mut work,
                            devport,
                            &mut frames,
                            &mut |d, q| send_local(&mut ports, &index, d, q, now, &free),
                        );
                    }
                    Err(e) => {
                        let n = p.counters.io_errors.fetch_add(1, Ordering::Relaxed) + 1;
                        // A port that keeps failing (its peer gone) is counted every time,
                        // logged at the 1st, 2nd, 4th, ... error: no flood of the log.
                        if n.is_power_of_two() {
                            tracing::warn!(port = p.devport, error = %e, errors = n, "receive failed");
                        }
                    }
                }
            }
        }
        // Copies other pipe threads made for this pipe's ports.
        while let Ok(copies) = cross.try_recv() {
            busy = true;
            let now = clock.now();
            take_copies(&mut stage, w, &mut work, copies, &mut |d, q| {
                send_local(&mut ports, &index, d, q, now, &free)
            });
        }
        busy |= serve_egress(&mut ports, clock.now(), &free);
        let now = clock.now();
        let mut due: Option<Nanos> = None;
        for p in &ports {
            if let Some(d) = flush_due(&p.port, now, &p.counters) {
                due = Some(due.map_or(d, |x| x.min(d)));
            }
        }
        if !receiving
            && w.quiesce.ingress_open.load(Ordering::SeqCst) == 0
            && w.quiesce.in_flight.load(Ordering::SeqCst) == 0
        {
            // Everything other threads sent before going quiet is in the channels now.
            serve_egress(&mut ports, clock.now(), &free);
            break;
        }
        if busy {
            empty_polls = 0;
            if !busy_poll.is_zero() {
                last_work = Instant::now();
            }
            continue;
        }
        // Idle: first let every owned port push out what it still holds (AF_XDP: frames a
        // kick left on the tx ring, completions to reclaim; AF_PACKET: a deferred kick), as a
        // tx thread's wake-ups would; then wait for a port, the bell or the next timed event.
        for p in &ports {
            if lock(&p.port).flush(now).is_err() {
                p.counters.io_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        let cap = if receiving {
            idle
        } else {
            Duration::from_millis(1)
        };
        let mut wait = until(due, now, cap);
        if wait.is_zero() {
            continue;
        }
        if receiving && !busy_poll.is_zero() && last_work.elapsed() < busy_poll {
            std::hint::spin_loop();
            continue;
        }
        if no_fd {
            empty_polls = empty_polls.saturating_add(1);
            if empty_polls <= SPIN_POLLS {
                std::thread::yield_now();
                continue;
            }
            wait = wait.min(NAP);
        }
        pollfds.clear();
        if receiving {
            pollfds.extend(ports.iter().filter_map(|p| p.fd).map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            }));
        }
        let has_work =
            || !ctl.is_empty() || !cross.is_empty() || ports.iter().any(|p| !p.egress.is_empty());
        let slept = match &bell {
            Some(b) => b.sleep(&mut pollfds, wait, has_work),
            None => {
                std::thread::sleep(wait);
                true
            }
        };
        if !slept {
            for p in &ports {
                p.counters.io_errors.fetch_add(1, Ordering::Relaxed);
            }
            std::thread::sleep(wait);
        }
    }
    drain_links(ports.iter().map(|p| &p.port), &*clock, drain);
    for p in &ports {
        let _ = lock(&p.port).stats();
    }
    // Late control requests are refused by dropping them (their callers see `Stopped`).
    stage
}
