//! The link model: [`LinkPort`] wraps any [`Port`] and applies, per direction, a rate limit
//! with serialization delay, a propagation delay, a bounded queue and fault injection, all
//! driven by the `now` passed in and a seeded random source. [`LinkControl`] is a cloneable
//! handle that changes the settings at run time and reads the fault counters.
//!
//! Timing per frame of `len` bytes on a link of rate `R` bit/s:
//! `start = max(now, link_free)`, `link_free = start + (len + overhead) * 8 / R`,
//! `due = link_free + propagation (+ reorder delay)`. Frames wait in a time-ordered heap and
//! leave when the caller's clock reaches `due` (on `send_batch`, `recv_batch` or `flush`).
//!
//! Hot path: one atomic load per batch to notice new settings; the settings mutex is only
//! taken when they changed.

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::fault::{flip_bit, BadProbability, FaultConfig, FaultInjector, FaultStats};
use crate::port::{FrameBatch, Port, PortError, StatsHandle};
use crate::time::Nanos;

/// Ethernet per-frame overhead on the wire besides the frame bytes we carry: preamble and
/// start delimiter (8), FCS (4) and the minimum inter-frame gap (12).
pub const ETHERNET_OVERHEAD: u32 = 24;

/// Held frames per direction beyond which new frames are dropped, whatever the settings, so a
/// huge delay cannot eat all memory.
pub const MAX_HELD_FRAMES: usize = 1 << 16;

/// Settings of one direction of a link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DirectionConfig {
    /// Line rate in bit/s; 0 means unlimited (no serialization delay).
    pub rate_bps: u64,
    /// Propagation delay in nanoseconds.
    pub delay_ns: u64,
    /// Bytes of per-frame wire overhead counted by the rate limiter.
    pub overhead_bytes: u32,
    /// The most bytes waiting for the rate limiter; beyond that, tail drop.
    pub queue_bytes: u64,
    /// Faults.
    pub faults: FaultConfig,
}

impl Default for DirectionConfig {
    fn default() -> Self {
        DirectionConfig {
            rate_bps: 0,
            delay_ns: 0,
            overhead_bytes: ETHERNET_OVERHEAD,
            queue_bytes: 4 << 20,
            faults: FaultConfig::default(),
        }
    }
}

impl DirectionConfig {
    /// Whether frames pass untouched and without delay.
    pub fn is_passthrough(&self) -> bool {
        self.rate_bps == 0 && self.delay_ns == 0 && self.faults.is_none()
    }
}

/// Settings of a link: the direction frames are sent (`tx`, what the wrapped port transmits)
/// and the direction they are received (`rx`), plus the random seed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LinkConfig {
    /// Applied to frames the port sends.
    pub tx: DirectionConfig,
    /// Applied to frames the port receives.
    pub rx: DirectionConfig,
    /// Seed of the fault injectors (the rx side uses a derived seed).
    pub seed: u64,
}

/// A bad link setting.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LinkConfigError {
    /// A probability outside [0, 1].
    #[error(transparent)]
    Probability(#[from] BadProbability),
    /// A `key=value` item that does not parse.
    #[error("bad link setting {item:?}: {reason}")]
    Syntax {
        /// The item.
        item: String,
        /// Why.
        reason: String,
    },
}

impl LinkConfig {
    /// Checks the settings.
    pub fn validate(&self) -> Result<(), LinkConfigError> {
        self.tx.faults.validate()?;
        self.rx.faults.validate()?;
        Ok(())
    }
}

/// Parses a rate like `10G`, `100Mbit`, `25g`, `1000000` (bit/s).
pub fn parse_rate(s: &str) -> Option<u64> {
    rate_bps(s).ok().map(|r| r as u64)
}

fn rate_bps(s: &str) -> Result<f64, QuantityError> {
    let t = s.trim().to_ascii_lowercase();
    let t = t
        .strip_suffix("bit/s")
        .or_else(|| t.strip_suffix("bps"))
        .or_else(|| t.strip_suffix("bit"))
        .unwrap_or(&t);
    let (num, mult) = match t.chars().last().ok_or(QuantityError::Syntax)? {
        'k' => (&t[..t.len() - 1], 1e3),
        'm' => (&t[..t.len() - 1], 1e6),
        'g' => (&t[..t.len() - 1], 1e9),
        't' => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    scale(num, mult)
}

/// Largest rate (bit/s) or time (ns) a link setting takes: just under `u64::MAX`.
const MAX_QUANTITY: f64 = 1.8e19;

/// Why a rate or a time was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QuantityError {
    /// Not a number with a known unit.
    Syntax,
    Negative,
    /// At or above [`MAX_QUANTITY`] (infinity included).
    TooLarge,
}

/// `num` times `mult`, checked to lie in `0..MAX_QUANTITY`.
fn scale(num: &str, mult: f64) -> Result<f64, QuantityError> {
    let v: f64 = num.parse().map_err(|_| QuantityError::Syntax)?;
    let r = v * mult;
    if r.is_nan() {
        Err(QuantityError::Syntax)
    } else if r < 0.0 {
        Err(QuantityError::Negative)
    } else if r >= MAX_QUANTITY {
        Err(QuantityError::TooLarge)
    } else {
        Ok(r)
    }
}

/// A `rate=` value, or the reason it is refused.
fn rate_setting(value: &str) -> Result<u64, String> {
    match rate_bps(value) {
        Ok(r) if r >= 1.0 => Ok(r as u64),
        Ok(_) | Err(QuantityError::Negative) => {
            Err("expected a rate of at least 1 bit/s, like 10G".into())
        }
        Err(QuantityError::Syntax) => Err("expected a rate like 10G".into()),
        Err(QuantityError::TooLarge) => Err(format!(
            "the rate is too large: at most {MAX_QUANTITY:e} bit/s (leave `rate` out for no limit)"
        )),
    }
}

/// A time value (`delay=`, `reorder_delay=`), or the reason it is refused.
fn time_setting(value: &str, example: &str) -> Result<u64, String> {
    duration_ns(value).map_err(|e| match e {
        QuantityError::Syntax => format!("expected a time like {example}"),
        QuantityError::Negative => {
            format!("a time cannot be negative; expected one like {example}")
        }
        QuantityError::TooLarge => {
            format!("the time is too large: at most {MAX_QUANTITY:e} ns (about 570 years)")
        }
    })
}

/// Parses a duration like `5us`, `1.5ms`, `200ns`, `2s` into nanoseconds.
pub fn parse_duration(s: &str) -> Option<u64> {
    duration_ns(s).ok()
}

fn duration_ns(s: &str) -> Result<u64, QuantityError> {
    let t = s.trim().to_ascii_lowercase();
    let (num, mult) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else {
        return Err(QuantityError::Syntax);
    };
    // Rounding can reach 2^64 only from above MAX_QUANTITY, which `scale` refuses.
    scale(num, mult).map(|r| r.round() as u64)
}

impl FromStr for LinkConfig {
    type Err = LinkConfigError;

    /// `rate=10G,delay=5us,loss=0.01,dup=0.001,reorder=0.01,reorder_delay=20us,corrupt=1e-4,
    /// down,drop_to=10.0.0.100,queue=1MB... ,seed=7`: applied to both directions unless
    /// prefixed `tx.` or `rx.`. `drop_to=ADDR` loses every IPv4 frame to ADDR
    /// ([`FaultConfig::drop_ipv4_dst`]). Each setting is given once (per prefix: `rate=10G,
    /// tx.rate=1G` sets the tx direction apart); a repeated one is refused.
    fn from_str(s: &str) -> Result<LinkConfig, LinkConfigError> {
        let mut cfg = LinkConfig::default();
        // Whether reorder_delay was given, per direction (tx, rx).
        let mut delay_given = [false, false];
        let mut seen = std::collections::HashSet::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let bad = |reason: &str| LinkConfigError::Syntax {
                item: item.to_string(),
                reason: reason.to_string(),
            };
            let (key, value) = item.split_once('=').unwrap_or((item, ""));
            // A setting given twice would silently keep the last one.
            let canonical = key.replace("duplicate", "dup");
            if !seen.insert(canonical) {
                return Err(bad(&format!(
                    "`{key}` is given twice; give each setting once"
                )));
            }
            if key == "seed" {
                cfg.seed = value.parse().map_err(|_| bad("expected an integer"))?;
                continue;
            }
            let (dirs, key): (&[bool], &str) = if let Some(k) = key.strip_prefix("tx.") {
                (&[true], k)
            } else if let Some(k) = key.strip_prefix("rx.") {
                (&[false], k)
            } else {
                (&[true, false], key)
            };
            for &is_tx in dirs {
                let d = if is_tx { &mut cfg.tx } else { &mut cfg.rx };
                let prob = || -> Result<f64, LinkConfigError> {
                    let p: f64 = value
                        .parse()
                        .map_err(|_| bad("expected a probability like 0.01"))?;
                    crate::fault::Prob::new(p)?;
                    Ok(p)
                };
                match key {
                    // Below 1 bit/s the rate would round to 0, which means "no limit": the
                    // slowest link asked for must not become an unlimited one.
                    "rate" => d.rate_bps = rate_setting(value).map_err(|r| bad(&r))?,
                    "delay" => d.delay_ns = time_setting(value, "5us").map_err(|r| bad(&r))?,
                    "queue" => {
                        d.queue_bytes = value.parse().map_err(|_| bad("expected bytes"))?;
                    }
                    "overhead" => {
                        d.overhead_bytes = value.parse().map_err(|_| bad("expected bytes"))?;
                    }
                    "loss" => d.faults.loss = prob()?,
                    "dup" | "duplicate" => d.faults.duplicate = prob()?,
                    "reorder" => d.faults.reorder = prob()?,
                    "corrupt" => d.faults.corrupt = prob()?,
                    "reorder_delay" => {
                        delay_given[usize::from(!is_tx)] = true;
                        d.faults.reorder_delay_ns =
                            time_setting(value, "20us").map_err(|r| bad(&r))?
                    }
                    "down" if value.is_empty() => d.faults.link_down = true,
                    "down" => return Err(bad("`down` takes no value: write `down` alone")),
                    "drop_to" => {
                        d.faults.drop_ipv4_dst = Some(
                            value
                                .parse()
                                .map_err(|_| bad("expected an IPv4 address like 10.0.0.100"))?,
                        )
                    }
                    _ => return Err(bad("unknown setting; known: rate, delay, queue, overhead, loss, dup, reorder, reorder_delay, corrupt, down, drop_to, seed (tx./rx. prefixes pick one direction)")),
                }
            }
        }
        for (d, explicit) in [(&mut cfg.tx, delay_given[0]), (&mut cfg.rx, delay_given[1])] {
            if d.faults.reorder > 0.0 && d.faults.reorder_delay_ns == 0 {
                if explicit {
                    return Err(LinkConfigError::Syntax {
                        item: "reorder_delay=0".into(),
                        reason: "with reorder above 0 nothing would be reordered; give a \
                                 time like 20us (or leave it out for 100us)"
                            .into(),
                    });
                }
                d.faults.reorder_delay_ns = DEFAULT_REORDER_DELAY_NS;
            }
        }
        Ok(cfg)
    }
}

/// How long a reordered frame is held back when `reorder=P` comes without `reorder_delay`:
/// 100 us, the time of eight full-size frames at 1 Gb/s and eighty at 10 Gb/s, so on a busy
/// link later frames do overtake it (without a delay `reorder` did nothing at all), while a
/// held frame stays well inside any transport's retransmission timeout.
pub const DEFAULT_REORDER_DELAY_NS: u64 = 100_000;

/// Live fault counters of one direction (single writer: the port's thread).
#[derive(Debug, Default)]
struct FaultCounters {
    lost: AtomicU64,
    duplicated: AtomicU64,
    reordered: AtomicU64,
    corrupted: AtomicU64,
    down_dropped: AtomicU64,
    queue_dropped: AtomicU64,
    stop_dropped: AtomicU64,
}

#[inline]
fn bump(c: &AtomicU64) {
    c.store(c.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
}

impl FaultCounters {
    fn snapshot(&self) -> FaultStats {
        let ld = |a: &AtomicU64| a.load(Ordering::Relaxed);
        FaultStats {
            lost: ld(&self.lost),
            duplicated: ld(&self.duplicated),
            reordered: ld(&self.reordered),
            corrupted: ld(&self.corrupted),
            down_dropped: ld(&self.down_dropped),
            queue_dropped: ld(&self.queue_dropped),
            stop_dropped: ld(&self.stop_dropped),
        }
    }
}

#[derive(Debug)]
struct Shared {
    generation: AtomicU64,
    config: Mutex<LinkConfig>,
    tx: FaultCounters,
    rx: FaultCounters,
}

/// A cloneable handle to change a [`LinkPort`]'s settings from any thread and read its fault
/// counters. Changes take effect at the port's next batch.
#[derive(Clone, Debug)]
pub struct LinkControl(Arc<Shared>);

impl LinkControl {
    /// A handle with the given settings.
    pub fn new(config: LinkConfig) -> Result<LinkControl, LinkConfigError> {
        config.validate()?;
        Ok(LinkControl(Arc::new(Shared {
            generation: AtomicU64::new(1),
            config: Mutex::new(config),
            tx: FaultCounters::default(),
            rx: FaultCounters::default(),
        })))
    }

    /// The current settings.
    pub fn config(&self) -> LinkConfig {
        self.0
            .config
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Replaces the settings.
    pub fn set_config(&self, config: LinkConfig) -> Result<(), LinkConfigError> {
        config.validate()?;
        self.update(|c| *c = config)
    }

    /// Changes the settings in place (`f` edits a copy; it is validated before it applies).
    pub fn update(&self, f: impl FnOnce(&mut LinkConfig)) -> Result<(), LinkConfigError> {
        let mut guard = self.0.config.lock().unwrap_or_else(|p| p.into_inner());
        let mut next = guard.clone();
        f(&mut next);
        next.validate()?;
        *guard = next;
        self.0.generation.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// Takes the link down or up (both directions).
    pub fn set_link_up(&self, up: bool) {
        // Cannot fail: no probability changes.
        let _ = self.update(|c| {
            c.tx.faults.link_down = !up;
            c.rx.faults.link_down = !up;
        });
    }

    /// Sets the loss probability of both directions.
    pub fn set_loss(&self, p: f64) -> Result<(), LinkConfigError> {
        self.update(|c| {
            c.tx.faults.loss = p;
            c.rx.faults.loss = p;
        })
    }

    /// Fault counters of the send direction.
    pub fn tx_stats(&self) -> FaultStats {
        self.0.tx.snapshot()
    }

    /// Fault counters of the receive direction.
    pub fn rx_stats(&self) -> FaultStats {
        self.0.rx.snapshot()
    }

    fn generation(&self) -> u64 {
        self.0.generation.load(Ordering::Acquire)
    }
}

/// A frame held by the link until `due`.
#[derive(Debug)]
struct Held {
    due: Nanos,
    seq: u64,
    data: Vec<u8>,
}

impl PartialEq for Held {
    fn eq(&self, o: &Self) -> bool {
        self.due == o.due && self.seq == o.seq
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, o: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(o))
    }
}
impl Ord for Held {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest `due`, then lowest `seq`.
    fn cmp(&self, o: &Self) -> CmpOrdering {
        o.due.cmp(&self.due).then(o.seq.cmp(&self.seq))
    }
}

/// One direction's model state.
#[derive(Debug)]
struct Direction {
    cfg: DirectionConfig,
    faults: FaultInjector,
    link_free: Nanos,
    heap: BinaryHeap<Held>,
    seq: u64,
    spare: Vec<Vec<u8>>,
    /// Where this direction's counters live: the link's control and whether it is `tx`.
    counters: (LinkControl, bool),
}

/// Frames still held when a link port goes away are counted, never lost silently.
impl Drop for Direction {
    fn drop(&mut self) {
        let n = self.heap.len() as u64;
        if n > 0 {
            let (ctl, tx) = &self.counters;
            let c = if *tx { &ctl.0.tx } else { &ctl.0.rx };
            c.stop_dropped.fetch_add(n, Ordering::Relaxed);
        }
    }
}

impl Direction {
    fn new(seed: u64, ctl: LinkControl, tx: bool) -> Direction {
        Direction {
            cfg: DirectionConfig::default(),
            faults: FaultInjector::new(seed),
            link_free: Nanos::ZERO,
            heap: BinaryHeap::new(),
            seq: 0,
            spare: Vec::new(),
            counters: (ctl, tx),
        }
    }

    fn configure(&mut self, cfg: &DirectionConfig) {
        // Validated by LinkControl before it could get here.
        let _ = self.faults.configure(&cfg.faults);
        self.cfg = cfg.clone();
    }

    /// New settings at `now`. When the timing changed (rate, delay, overhead), the frames held
    /// under the old settings are timed again, in their order, as if they had been put on the
    /// link now under the new ones: a frame queued behind a rate of 1 bit/s leaves as soon as
    /// the new rate allows, not after its old due time.
    fn reconfigure(&mut self, cfg: &DirectionConfig, now: Nanos) {
        let timing = |c: &DirectionConfig| (c.rate_bps, c.delay_ns, c.overhead_bytes);
        let retime = timing(&self.cfg) != timing(cfg) && !self.heap.is_empty();
        self.configure(cfg);
        if !retime {
            return;
        }
        let mut held = std::mem::take(&mut self.heap).into_sorted_vec();
        // `Held`'s order is reversed (earliest due last); put the earliest first.
        held.reverse();
        self.link_free = now;
        for mut h in held {
            let start = self.link_free.max(now);
            self.link_free = start + self.serialization(h.data.len());
            h.due = self.link_free + Nanos(self.cfg.delay_ns);
            self.heap.push(h);
        }
    }

    /// Nothing to model and nothing held: frames may bypass the model entirely.
    fn bypass(&self) -> bool {
        self.heap.is_empty() && self.cfg.is_passthrough()
    }

    fn serialization(&self, len: usize) -> Nanos {
        if self.cfg.rate_bps == 0 {
            return Nanos::ZERO;
        }
        let bits = (len as u128 + u128::from(self.cfg.overhead_bytes)) * 8;
        let ns = (bits * 1_000_000_000).div_ceil(u128::from(self.cfg.rate_bps));
        Nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    fn hold(&mut self, data: &[u8], due: Nanos, flip: Option<usize>) {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(data);
        if let Some(bit) = flip {
            flip_bit(&mut buf, bit);
        }
        self.seq += 1;
        self.heap.push(Held {
            due,
            seq: self.seq,
            data: buf,
        });
    }

    /// Puts one frame on the link at `now`.
    fn admit(&mut self, data: &[u8], now: Nanos, counters: &FaultCounters) {
        if self.faults.link_down() {
            bump(&counters.down_dropped);
            return;
        }
        if self.faults.matches_drop(data) {
            bump(&counters.lost);
            return;
        }
        let v = self.faults.decide(data.len());
        if v.drop {
            bump(&counters.lost);
            return;
        }
        let copies = if v.duplicate { 2 } else { 1 };
        for copy in 0..copies {
            if self.heap.len() >= MAX_HELD_FRAMES {
                bump(&counters.queue_dropped);
                return;
            }
            let start = self.link_free.max(now);
            if self.cfg.rate_bps != 0 {
                let backlog_ns = u128::from((start - now).as_nanos());
                let backlog_bytes = backlog_ns * u128::from(self.cfg.rate_bps) / 8_000_000_000;
                if backlog_bytes + data.len() as u128 > u128::from(self.cfg.queue_bytes) {
                    bump(&counters.queue_dropped);
                    return;
                }
            }
            self.link_free = start + self.serialization(data.len());
            let mut due = self.link_free + Nanos(self.cfg.delay_ns);
            if copy == 0 {
                if v.extra_delay > Nanos::ZERO {
                    bump(&counters.reordered);
                    due += v.extra_delay;
                }
                if v.flip_bit.is_some() {
                    bump(&counters.corrupted);
                }
                self.hold(data, due, v.flip_bit);
            } else {
                bump(&counters.duplicated);
                self.hold(data, due, None);
            }
        }
    }

    /// Moves frames due at `now` into `out` (as many as fit). Frames still held when the
    /// link went down are dropped.
    fn release(&mut self, out: &mut FrameBatch, now: Nanos, counters: &FaultCounters) {
        while !out.is_full() {
            match self.heap.peek() {
                Some(h) if h.due <= now => {}
                _ => break,
            }
            let Some(h) = self.heap.pop() else { break };
            if self.faults.link_down() {
                bump(&counters.down_dropped);
            } else {
                out.push(&h.data, h.due);
            }
            if self.spare.len() < 1024 {
                self.spare.push(h.data);
            }
        }
    }

    fn next_due(&self) -> Option<Nanos> {
        self.heap.peek().map(|h| h.due)
    }
}

/// A port wrapped in a link model. See the module documentation.
pub struct LinkPort<P: Port> {
    inner: P,
    ctl: LinkControl,
    generation: u64,
    tx: Direction,
    rx: Direction,
    /// Frames released towards the inner port.
    out: FrameBatch,
    /// Frames received from the inner port before the model sees them.
    scratch: FrameBatch,
}

impl<P: Port + std::fmt::Debug> std::fmt::Debug for LinkPort<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinkPort")
            .field("inner", &self.inner)
            .field("config", &self.tx.cfg)
            .finish()
    }
}

impl<P: Port> LinkPort<P> {
    /// Wraps `inner` with the given settings.
    pub fn new(inner: P, config: LinkConfig) -> Result<LinkPort<P>, LinkConfigError> {
        let ctl = LinkControl::new(config)?;
        Ok(LinkPort::with_control(inner, ctl))
    }

    /// Wraps `inner`, controlled by an existing handle.
    pub fn with_control(inner: P, ctl: LinkControl) -> LinkPort<P> {
        let cfg = ctl.config();
        let mut p = LinkPort {
            inner,
            generation: ctl.generation(),
            tx: Direction::new(cfg.seed, ctl.clone(), true),
            rx: Direction::new(cfg.seed ^ 0x9e37_79b9_7f4a_7c15, ctl.clone(), false),
            ctl,
            out: FrameBatch::new(64),
            scratch: FrameBatch::new(64),
        };
        p.tx.configure(&cfg.tx);
        p.rx.configure(&cfg.rx);
        p
    }

    /// The control handle (clone it to change settings from elsewhere).
    pub fn control(&self) -> LinkControl {
        self.ctl.clone()
    }

    /// The wrapped port.
    pub fn inner(&self) -> &P {
        &self.inner
    }

    /// The wrapped port, mutable.
    pub fn inner_mut(&mut self) -> &mut P {
        &mut self.inner
    }

    /// Unwraps, dropping any held frames.
    pub fn into_inner(self) -> P {
        self.inner
    }

    fn refresh(&mut self, now: Nanos) {
        let g = self.ctl.generation();
        if g != self.generation {
            self.generation = g;
            let cfg = self.ctl.config();
            self.tx.reconfigure(&cfg.tx, now);
            self.rx.reconfigure(&cfg.rx, now);
        }
    }

    fn release_tx(&mut self, now: Nanos) -> Result<usize, PortError> {
        let mut sent = 0;
        loop {
            self.tx.release(&mut self.out, now, &self.ctl.0.tx);
            if self.out.is_empty() {
                return Ok(sent);
            }
            sent += self.inner.send_batch(&mut self.out, now)?;
        }
    }
}

impl<P: Port> Port for LinkPort<P> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn recv_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        self.refresh(now);
        if self.rx.bypass() {
            return self.inner.recv_batch(batch, now);
        }
        // Pull what the inner port has (bounded by our scratch batch) into the model, then
        // hand over what is due.
        self.scratch.clear();
        self.inner.recv_batch(&mut self.scratch, now)?;
        for f in self.scratch.iter() {
            self.rx.admit(&f.data, now, &self.ctl.0.rx);
        }
        self.scratch.clear();
        let before = batch.len();
        self.rx.release(batch, now, &self.ctl.0.rx);
        Ok(batch.len() - before)
    }

    fn send_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        self.refresh(now);
        if self.tx.bypass() {
            return self.inner.send_batch(batch, now);
        }
        for f in batch.iter() {
            self.tx.admit(&f.data, now, &self.ctl.0.tx);
        }
        batch.clear();
        self.release_tx(now)
    }

    fn flush(&mut self, now: Nanos) -> Result<usize, PortError> {
        self.refresh(now);
        let n = self.release_tx(now)?;
        Ok(n + self.inner.flush(now)?)
    }

    fn poll_timeout(&self) -> Option<Nanos> {
        [
            self.tx.next_due(),
            self.rx.next_due(),
            self.inner.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn stats_handle(&self) -> StatsHandle {
        self.inner.stats_handle()
    }

    fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        self.inner.raw_fd()
    }

    fn wait_readable(&mut self, timeout: Duration) -> Result<bool, PortError> {
        if self.rx.next_due().is_some() {
            // Held frames become ready by time alone; let the caller check its clock.
            return Ok(true);
        }
        self.inner.wait_readable(timeout)
    }

    fn max_frame_len(&self) -> usize {
        self.inner.max_frame_len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::{pair, pair_with_capacity};
    use crate::port::DropReason;

    fn frame(i: u16, len: usize) -> Vec<u8> {
        let mut f = vec![0u8; len];
        f[14..16].copy_from_slice(&i.to_be_bytes());
        f
    }

    fn id(f: &crate::port::Frame) -> u16 {
        u16::from_be_bytes([f.data[14], f.data[15]])
    }

    /// Frames queued under a crawling rate leave under the new settings once they change,
    /// in order; frames still held when the port goes away are counted as `stop_dropped`.
    #[test]
    fn a_settings_change_retimes_held_frames_and_a_stop_counts_what_is_left() {
        let (a, mut b) = pair("a", "b");
        let cfg: LinkConfig = "rate=1".parse().unwrap();
        let mut a = LinkPort::new(a, cfg).unwrap();
        let ctl = a.control();
        let mut tx = FrameBatch::new(8);
        for i in 0..3 {
            tx.push(&frame(i, 64), Nanos::ZERO);
        }
        a.send_batch(&mut tx, Nanos::ZERO).unwrap();
        // At 1 bit/s the first frame would take 704 s.
        assert!(a.poll_timeout().unwrap() > Nanos(700_000_000_000));
        ctl.set_config("delay=5us".parse().unwrap()).unwrap();
        let now = Nanos(1_000_000);
        a.flush(now).unwrap();
        assert_eq!(a.poll_timeout(), Some(now + Nanos(5_000)));
        a.flush(now + Nanos(5_000)).unwrap();
        let mut rx = FrameBatch::new(8);
        assert_eq!(b.recv_batch(&mut rx, now).unwrap(), 3);
        assert_eq!(rx.iter().map(id).collect::<Vec<_>>(), vec![0, 1, 2]);
        // Two more under a crawling rate, then the port goes away: counted, not lost silently.
        ctl.set_config("rate=1".parse().unwrap()).unwrap();
        for i in 3..5 {
            tx.push(&frame(i, 64), now);
        }
        a.send_batch(&mut tx, now).unwrap();
        drop(a);
        assert_eq!(ctl.tx_stats().stop_dropped, 2);
        assert_eq!(ctl.rx_stats().stop_dropped, 0);
    }

    /// Sends `n` frames through a link with `cfg` on the tx side, one per `gap` ns, draining
    /// the far end as time passes; returns (receive time, id) of every delivered frame.
    fn run(cfg: LinkConfig, n: u16, len: usize, gap: u64) -> (Vec<(Nanos, u16)>, LinkControl) {
        let (a, mut b) = pair_with_capacity("a", "b", 1 << 16);
        let mut a = LinkPort::new(a, cfg).unwrap();
        let ctl = a.control();
        let mut tx = FrameBatch::new(1);
        let mut rx = FrameBatch::new(256);
        let mut got = Vec::new();
        let mut now = Nanos::ZERO;
        for i in 0..n {
            tx.push(&frame(i, len), now);
            a.send_batch(&mut tx, now).unwrap();
            while b.recv_batch(&mut rx, now).unwrap() > 0 {
                got.extend(rx.iter().map(|f| (f.ts, id(f))));
                rx.clear();
            }
            now += Nanos(gap);
            // Advance through the held frames' due times up to the next send.
            while let Some(t) = a.poll_timeout().filter(|t| *t <= now) {
                a.flush(t).unwrap();
                while b.recv_batch(&mut rx, t).unwrap() > 0 {
                    got.extend(rx.iter().map(|f| (f.ts, id(f))));
                    rx.clear();
                }
            }
        }
        while let Some(t) = a.poll_timeout() {
            a.flush(t).unwrap();
            while b.recv_batch(&mut rx, t).unwrap() > 0 {
                got.extend(rx.iter().map(|f| (f.ts, id(f))));
                rx.clear();
            }
        }
        (got, ctl)
    }

    #[test]
    fn passthrough_delivers_everything_immediately() {
        let (got, ctl) = run(LinkConfig::default(), 50, 64, 10);
        assert_eq!(got.len(), 50);
        assert!(got.iter().enumerate().all(|(i, (_, id))| *id as usize == i));
        assert_eq!(ctl.tx_stats(), FaultStats::default());
    }

    #[test]
    fn rate_and_delay_set_arrival_times() {
        // 1000-byte frames + 24 overhead at 1 Gbit/s: 8192 ns each; 5 us propagation.
        let cfg: LinkConfig = "tx.rate=1G,tx.delay=5us".parse().unwrap();
        let (got, _) = run(cfg, 3, 1000, 0);
        let times: Vec<u64> = got.iter().map(|(t, _)| t.as_nanos()).collect();
        assert_eq!(times, vec![8192 + 5000, 2 * 8192 + 5000, 3 * 8192 + 5000]);
    }

    #[test]
    fn queue_limit_tail_drops() {
        let mut cfg: LinkConfig = "tx.rate=1G".parse().unwrap();
        cfg.tx.queue_bytes = 3100;
        let (got, ctl) = run(cfg, 10, 1000, 0);
        // Backlog before each admission: 0, 1024, 2048, 3072 bytes -> the 4th frame
        // (3072 + 1000 > 3100) and later ones are dropped.
        assert_eq!(got.len(), 3);
        assert_eq!(ctl.tx_stats().queue_dropped, 7);
    }

    /// Loss with a fixed seed: the measured rate must sit inside a 5-sigma binomial band.
    #[test]
    fn loss_rate_matches_configuration() {
        for (p, seed) in [(0.01, 1u64), (0.1, 2), (0.5, 3)] {
            let mut cfg = LinkConfig::default();
            cfg.tx.faults.loss = p;
            cfg.seed = seed;
            let n = 20_000u16;
            let (got, ctl) = run(cfg, n, 64, 1);
            let lost = u64::from(n) - got.len() as u64;
            assert_eq!(ctl.tx_stats().lost, lost);
            let nf = f64::from(n);
            let sigma = (nf * p * (1.0 - p)).sqrt();
            let diff = (lost as f64 - nf * p).abs();
            assert!(diff < 5.0 * sigma, "p={p}: lost {lost} of {n}");
        }
    }

    #[test]
    fn faults_are_deterministic_for_a_seed() {
        let cfg: LinkConfig = "loss=0.1,dup=0.1,reorder=0.1,reorder_delay=1us,corrupt=0.1,seed=42"
            .parse()
            .unwrap();
        let (a, _) = run(cfg.clone(), 500, 64, 100);
        let (b, _) = run(cfg, 500, 64, 100);
        assert_eq!(a, b);
    }

    #[test]
    fn duplication_reorder_and_corruption_happen_and_are_counted() {
        let cfg: LinkConfig = "tx.dup=0.2,tx.reorder=0.2,tx.reorder_delay=350ns,tx.corrupt=0.2"
            .parse()
            .unwrap();
        let (got, ctl) = run(cfg, 1000, 64, 100);
        let s = ctl.tx_stats();
        assert!(
            s.duplicated > 100 && s.reordered > 100 && s.corrupted > 100,
            "{s:?}"
        );
        assert_eq!(got.len() as u64, 1000 + s.duplicated);
        let out_of_order = got.windows(2).filter(|w| w[1].1 < w[0].1).count();
        assert!(out_of_order > 50, "{out_of_order}");
    }

    #[test]
    fn corruption_flips_one_bit() {
        let (a, mut b) = pair("a", "b");
        let mut a = LinkPort::new(a, "tx.corrupt=1".parse().unwrap()).unwrap();
        let mut batch = FrameBatch::new(1);
        let orig = frame(7, 64);
        batch.push(&orig, Nanos(0));
        a.send_batch(&mut batch, Nanos(0)).unwrap();
        b.recv_batch(&mut batch, Nanos(0)).unwrap();
        let diff: u32 = orig
            .iter()
            .zip(&batch.frames()[0].data)
            .map(|(x, y)| (x ^ y).count_ones())
            .sum();
        assert_eq!(diff, 1);
    }

    #[test]
    fn link_down_at_run_time_drops_and_recovers() {
        let (a, mut b) = pair("a", "b");
        let mut a = LinkPort::new(a, LinkConfig::default()).unwrap();
        let ctl = a.control();
        let mut batch = FrameBatch::new(4);
        ctl.set_link_up(false);
        batch.push(&frame(1, 64), Nanos(0));
        a.send_batch(&mut batch, Nanos(0)).unwrap();
        assert_eq!(b.recv_batch(&mut batch, Nanos(0)).unwrap(), 0);
        assert_eq!(ctl.tx_stats().down_dropped, 1);
        ctl.set_link_up(true);
        batch.push(&frame(2, 64), Nanos(1));
        a.send_batch(&mut batch, Nanos(1)).unwrap();
        assert_eq!(b.recv_batch(&mut batch, Nanos(1)).unwrap(), 1);
        assert!(ctl.set_loss(3.0).is_err(), "bad settings are refused");
    }

    #[test]
    fn receive_side_model_delays_incoming_frames() {
        let (mut a, b) = pair("a", "b");
        let mut b = LinkPort::new(b, "rx.delay=1us".parse().unwrap()).unwrap();
        let mut batch = FrameBatch::new(4);
        batch.push(&frame(1, 64), Nanos(0));
        a.send_batch(&mut batch, Nanos(0)).unwrap();
        assert_eq!(b.recv_batch(&mut batch, Nanos(10)).unwrap(), 0);
        assert_eq!(b.poll_timeout(), Some(Nanos(1010)));
        assert_eq!(b.recv_batch(&mut batch, Nanos(1010)).unwrap(), 1);
        assert_eq!(batch.frames()[0].ts, Nanos(1010));
        assert_eq!(b.stats().rx_packets, 1, "inner port stats are shown");
        assert_eq!(b.stats().tx_dropped(DropReason::QueueFull), 0);
    }

    #[test]
    fn drop_to_loses_frames_to_one_address_only_and_counts_them() {
        let ipv4 = |dst: [u8; 4]| {
            let mut f = vec![0u8; 64];
            f[12..14].copy_from_slice(&[0x08, 0x00]);
            f[14] = 0x45;
            f[30..34].copy_from_slice(&dst);
            f
        };
        let cfg: LinkConfig = "rx.drop_to=10.0.0.100".parse().unwrap();
        assert_eq!(
            cfg.rx.faults.drop_ipv4_dst,
            Some(std::net::Ipv4Addr::new(10, 0, 0, 100))
        );
        assert_eq!(cfg.tx.faults.drop_ipv4_dst, None);
        let (mut a, b) = pair("a", "b");
        let mut b = LinkPort::new(b, cfg).unwrap();
        let ctl = b.control();
        let mut batch = FrameBatch::new(8);
        for dst in [[10, 0, 0, 100], [10, 0, 0, 2], [10, 0, 0, 100]] {
            batch.push(&ipv4(dst), Nanos(0));
        }
        a.send_batch(&mut batch, Nanos(0)).unwrap();
        batch.clear();
        assert_eq!(b.recv_batch(&mut batch, Nanos(0)).unwrap(), 1);
        assert_eq!(batch.frames()[0].data[30..34], [10, 0, 0, 2]);
        assert_eq!(ctl.rx_stats().lost, 2);
        // Healed at run time: everything passes again.
        ctl.update(|c| c.rx.faults.drop_ipv4_dst = None).unwrap();
        batch.clear();
        batch.push(&ipv4([10, 0, 0, 100]), Nanos(1));
        a.send_batch(&mut batch, Nanos(1)).unwrap();
        batch.clear();
        assert_eq!(b.recv_batch(&mut batch, Nanos(1)).unwrap(), 1);
        assert_eq!(ctl.rx_stats().lost, 2);
        assert!("drop_to=10.0.0".parse::<LinkConfig>().is_err());
    }

    #[test]
    fn settings_parse_and_reject() {
        let c: LinkConfig = "rate=25G,delay=1.5us,loss=0.01,seed=9".parse().unwrap();
        assert_eq!(c.tx.rate_bps, 25_000_000_000);
        assert_eq!(c.rx.delay_ns, 1500);
        assert_eq!(c.rx.faults.loss, 0.01);
        assert_eq!(c.seed, 9);
        assert!("loss=2".parse::<LinkConfig>().is_err());
        assert!("rate=fast".parse::<LinkConfig>().is_err());
        assert!("bogus=1".parse::<LinkConfig>().is_err());
        // A rate below 1 bit/s is refused, not turned into "no limit".
        for r in ["rate=0", "rate=0.5", "rate=0.0000001"] {
            let e = r.parse::<LinkConfig>().unwrap_err().to_string();
            assert!(e.contains("at least 1 bit/s"), "{r}: {e}");
        }
        assert_eq!("rate=1".parse::<LinkConfig>().unwrap().tx.rate_bps, 1);
        let e = "down=true".parse::<LinkConfig>().unwrap_err().to_string();
        assert!(e.contains("takes no value"), "{e}");
        assert_eq!(parse_rate("100Mbit"), Some(100_000_000));
        assert_eq!(parse_duration("2ms"), Some(2_000_000));
        assert_eq!(parse_duration("5"), None);
    }

    /// Too large, negative and repeated settings are refused with the real reason (a huge rate
    /// used to be "at least 1 bit/s", a huge delay "expected a time like 5us", and a repeated
    /// key silently kept the last value).
    #[test]
    fn out_of_range_and_repeated_settings_name_the_reason() {
        let err = |s: &str| s.parse::<LinkConfig>().unwrap_err().to_string();
        for r in ["rate=1e300", "rate=inf", "rate=20000000000T"] {
            let e = err(r);
            assert!(
                e.contains("rate is too large: at most 1.8e19 bit/s"),
                "{r}: {e}"
            );
        }
        for d in [
            "delay=18446744073709551615ns",
            "delay=1e300s",
            "reorder_delay=1e300s",
        ] {
            let e = err(d);
            assert!(
                e.contains("time is too large: at most 1.8e19 ns"),
                "{d}: {e}"
            );
        }
        assert!(err("delay=-1us").contains("cannot be negative"));
        assert!(err("delay=5").contains("expected a time like 5us"));
        assert!(err("rate=-1").contains("at least 1 bit/s"));
        assert!(err("rate=fast").contains("expected a rate like 10G"));
        for s in [
            "rate=10G,rate=1",
            "delay=1ms,delay=2ms",
            "dup=0.1,duplicate=0.2",
            "seed=1,seed=2",
        ] {
            let e = err(s);
            assert!(e.contains("is given twice"), "{s}: {e}");
        }
        // One direction's own setting beside the shared one is not a repeat.
        let c: LinkConfig = "rate=10G,tx.rate=1G".parse().unwrap();
        assert_eq!(
            (c.tx.rate_bps, c.rx.rate_bps),
            (1_000_000_000, 10_000_000_000)
        );
        assert_eq!(c, "rate=10G , tx.rate=1G".parse().unwrap());
    }

    #[test]
    fn reorder_without_a_delay_gets_the_default_and_a_zero_delay_is_refused() {
        let cfg: LinkConfig = "reorder=0.1".parse().unwrap();
        assert_eq!(cfg.tx.faults.reorder_delay_ns, DEFAULT_REORDER_DELAY_NS);
        assert_eq!(cfg.rx.faults.reorder_delay_ns, DEFAULT_REORDER_DELAY_NS);
        let cfg: LinkConfig = "tx.reorder=0.1,reorder_delay=5us".parse().unwrap();
        assert_eq!(cfg.tx.faults.reorder_delay_ns, 5_000);
        assert_eq!(cfg.rx.faults.reorder, 0.0);
        let e = "reorder=0.1,reorder_delay=0"
            .parse::<LinkConfig>()
            .unwrap_err();
        assert!(e.to_string().contains("reorder_delay=0"), "{e}");
        // And the default holds a reordered frame back by that much.
        let mut faults = crate::fault::FaultInjector::new(1);
        let cfg: LinkConfig = "reorder=1".parse().unwrap();
        faults.configure(&cfg.tx.faults).unwrap();
        let v = faults.decide(100);
        assert_eq!(v.extra_delay, Nanos(DEFAULT_REORDER_DELAY_NS));
    }
}
