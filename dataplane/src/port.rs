//! The one [`Port`] trait every packet I/O backend implements, the reusable [`FrameBatch`] that
//! carries frames in and out of it without allocating per frame, and port statistics.
//!
//! Contract shared by all backends:
//! - `recv_batch` never blocks: it appends what is ready now (up to the batch's free room) and
//!   returns how many frames it appended. `wait_readable` is the blocking call.
//! - `send_batch` consumes the whole batch: every frame is either handed to the link or counted
//!   as a drop with a [`DropReason`]; the batch is empty afterwards and its buffers are back in
//!   its pool. It returns how many frames were handed to the link. It never blocks for long.
//! - Time is passed in (`now`), never read from a clock inside a port.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::time::Nanos;

/// The largest frame any backend accepts by default (a 9216-byte jumbo frame plus Ethernet and
/// two VLAN headers). Backends with a real MTU check against that instead.
pub const MAX_FRAME_LEN: usize = 9216 + 14 + 8;

/// One frame: its bytes (starting at the destination MAC, no FCS) and its timestamp.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The frame's bytes.
    pub data: Vec<u8>,
    /// Receive time (on receive) or the time the frame was queued (on send; backends may
    /// ignore it and use the `now` passed to `send_batch`).
    pub ts: Nanos,
}

/// A reusable batch of frames with a pool of spare buffers.
///
/// Frames live in `frames[..len]`; slots past `len` keep their (cleared) buffers for reuse, and
/// `pool` holds further spare buffers. After warm-up, filling and clearing a batch allocates
/// nothing.
#[derive(Debug)]
pub struct FrameBatch {
    frames: Vec<Frame>,
    len: usize,
    capacity: usize,
    pool: Vec<Vec<u8>>,
}

/// Buffers kept in a batch's pool beyond its capacity are released, so a batch that receives
/// buffers from elsewhere (in-memory links move buffers) cannot grow without bound.
const POOL_SLACK: usize = 64;

impl FrameBatch {
    /// A batch that holds at most `capacity` frames (at least 1).
    pub fn new(capacity: usize) -> FrameBatch {
        let capacity = capacity.max(1);
        FrameBatch {
            frames: Vec::with_capacity(capacity),
            len: 0,
            capacity,
            pool: Vec::new(),
        }
    }

    /// A batch whose buffers are pre-allocated with `buf_capacity` bytes each, so that even the
    /// first use allocates nothing.
    pub fn with_buffers(capacity: usize, buf_capacity: usize) -> FrameBatch {
        let mut b = FrameBatch::new(capacity);
        for _ in 0..b.capacity {
            b.frames.push(Frame {
                data: Vec::with_capacity(buf_capacity),
                ts: Nanos::ZERO,
            });
        }
        b
    }

    /// How many frames are in the batch.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the batch holds no frames.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The most frames the batch holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    /// Free room, in frames.
    pub fn remaining(&self) -> usize {
        self.capacity - self.len
    }
    /// Whether no more frames fit.
    pub fn is_full(&self) -> bool {
        self.len == self.capacity
    }

    /// The frames in the batch.
    pub fn frames(&self) -> &[Frame] {
        &self.frames[..self.len]
    }
    /// The frames in the batch, mutable (to rewrite bytes or timestamps in place).
    pub fn frames_mut(&mut self) -> &mut [Frame] {
        &mut self.frames[..self.len]
    }
    /// Iterates over the frames.
    pub fn iter(&self) -> std::slice::Iter<'_, Frame> {
        self.frames().iter()
    }

    /// Appends a copy of `data` with timestamp `ts`, reusing a pooled buffer.
    /// Returns `false` (and appends nothing) when the batch is full.
    pub fn push(&mut self, data: &[u8], ts: Nanos) -> bool {
        match self.push_slot(ts) {
            Some(buf) => {
                buf.extend_from_slice(data);
                true
            }
            None => false,
        }
    }

    /// Appends an empty frame with timestamp `ts` and returns its (cleared) buffer for the
    /// caller to fill in place. `None` when the batch is full.
    pub fn push_slot(&mut self, ts: Nanos) -> Option<&mut Vec<u8>> {
        if self.len == self.capacity {
            return None;
        }
        if self.len == self.frames.len() {
            let data = self.pool.pop().unwrap_or_default();
            self.frames.push(Frame { data, ts });
        }
        let f = &mut self.frames[self.len];
        self.len += 1;
        if f.data.capacity() == 0 {
            // The slot's buffer was moved out (`take_data`); refill it from the pool.
            if let Some(b) = self.pool.pop() {
                f.data = b;
            }
        }
        f.data.clear();
        f.ts = ts;
        Some(&mut f.data)
    }

    /// Appends an owned buffer as a frame. The buffer the slot held before is returned so the
    /// caller can hand it back to wherever `data` came from (keeping buffer counts balanced).
    /// When the batch is full, `data` itself comes back as the error.
    pub fn push_owned(&mut self, data: Vec<u8>, ts: Nanos) -> Result<Option<Vec<u8>>, Vec<u8>> {
        if self.len == self.capacity {
            return Err(data);
        }
        let old = if self.len == self.frames.len() {
            self.frames.push(Frame { data, ts });
            self.pool.pop()
        } else {
            let f = &mut self.frames[self.len];
            f.ts = ts;
            Some(std::mem::replace(&mut f.data, data))
        };
        self.len += 1;
        Ok(old.filter(|b| b.capacity() > 0))
    }

    /// Takes frame `i`'s buffer out (leaving an empty one) so it can be moved elsewhere.
    /// Returns `None` when `i` is out of range.
    pub fn take_data(&mut self, i: usize) -> Option<Vec<u8>> {
        if i >= self.len {
            return None;
        }
        Some(std::mem::take(&mut self.frames[i].data))
    }

    /// Gives a spare buffer to the batch's pool (dropped if the pool is already large).
    pub fn give_buffer(&mut self, mut buf: Vec<u8>) {
        if buf.capacity() > 0 && self.pool.len() < self.capacity + POOL_SLACK {
            buf.clear();
            self.pool.push(buf);
        }
    }

    /// Takes a spare buffer out of the pool, if there is one.
    pub fn take_spare(&mut self) -> Option<Vec<u8>> {
        self.pool.pop()
    }

    /// Removes the last frame (its buffer stays with the batch).
    pub fn pop(&mut self) {
        if self.len > 0 {
            self.len -= 1;
        }
    }

    /// Empties the batch; buffers stay for reuse.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Keeps only the frames for which `keep` returns true, preserving order.
    pub fn retain(&mut self, mut keep: impl FnMut(&Frame) -> bool) {
        let mut w = 0;
        for r in 0..self.len {
            if keep(&self.frames[r]) {
                self.frames.swap(w, r);
                w += 1;
            }
        }
        self.len = w;
    }
}

impl Default for FrameBatch {
    fn default() -> Self {
        FrameBatch::new(64)
    }
}

/// Why a port dropped a frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The queue or ring towards the link (or the peer's receive queue) was full.
    QueueFull,
    /// The link was down (fault injection) or the interface was down.
    LinkDown,
    /// The frame is longer than the port's maximum frame length or MTU.
    TooLong,
    /// The frame is shorter than an Ethernet header (14 bytes).
    TooShort,
    /// The frame was cut short on receive (capture length below the wire length).
    Truncated,
    /// An I/O error for this one frame.
    IoError,
}

impl DropReason {
    /// Number of reasons.
    pub const COUNT: usize = 6;
    /// All reasons, in index order.
    pub const ALL: [DropReason; DropReason::COUNT] = [
        DropReason::QueueFull,
        DropReason::LinkDown,
        DropReason::TooLong,
        DropReason::TooShort,
        DropReason::Truncated,
        DropReason::IoError,
    ];
    /// Index into counter arrays.
    pub const fn index(self) -> usize {
        self as usize
    }
    /// A short lowercase name for reports and metrics.
    pub const fn name(self) -> &'static str {
        match self {
            DropReason::QueueFull => "queue_full",
            DropReason::LinkDown => "link_down",
            DropReason::TooLong => "too_long",
            DropReason::TooShort => "too_short",
            DropReason::Truncated => "truncated",
            DropReason::IoError => "io_error",
        }
    }
}

/// A snapshot of a port's counters.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Frames received (delivered to the caller).
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames sent (handed to the link).
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Receive-side drops by reason ([`DropReason::index`]).
    pub rx_drops: [u64; DropReason::COUNT],
    /// Send-side drops by reason ([`DropReason::index`]).
    pub tx_drops: [u64; DropReason::COUNT],
}

impl PortStats {
    /// Receive drops for one reason.
    pub fn rx_dropped(&self, r: DropReason) -> u64 {
        self.rx_drops[r.index()]
    }
    /// Send drops for one reason.
    pub fn tx_dropped(&self, r: DropReason) -> u64 {
        self.tx_drops[r.index()]
    }
    /// All drops, both directions.
    pub fn total_drops(&self) -> u64 {
        self.rx_drops.iter().chain(self.tx_drops.iter()).sum()
    }
}

/// Live counters of one port. The port's own thread is the only writer; any thread may read a
/// snapshot through a [`StatsHandle`]. Writes are plain relaxed load+store (no locked
/// read-modify-write), which is exact with a single writer.
#[derive(Debug, Default)]
pub struct PortCounters {
    rx_packets: AtomicU64,
    rx_bytes: AtomicU64,
    tx_packets: AtomicU64,
    tx_bytes: AtomicU64,
    rx_drops: [AtomicU64; DropReason::COUNT],
    tx_drops: [AtomicU64; DropReason::COUNT],
}

#[inline]
fn bump(c: &AtomicU64, by: u64) {
    c.store(
        c.load(Ordering::Relaxed).wrapping_add(by),
        Ordering::Relaxed,
    );
}

impl PortCounters {
    /// Counts `packets` received frames totalling `bytes`.
    #[inline]
    pub fn add_rx(&self, packets: u64, bytes: u64) {
        bump(&self.rx_packets, packets);
        bump(&self.rx_bytes, bytes);
    }
    /// Counts `packets` sent frames totalling `bytes`.
    #[inline]
    pub fn add_tx(&self, packets: u64, bytes: u64) {
        bump(&self.tx_packets, packets);
        bump(&self.tx_bytes, bytes);
    }
    /// Counts receive drops.
    #[inline]
    pub fn rx_drop(&self, r: DropReason, n: u64) {
        bump(&self.rx_drops[r.index()], n);
    }
    /// Counts send drops.
    #[inline]
    pub fn tx_drop(&self, r: DropReason, n: u64) {
        bump(&self.tx_drops[r.index()], n);
    }
    /// A snapshot.
    pub fn snapshot(&self) -> PortStats {
        let ld = |a: &AtomicU64| a.load(Ordering::Relaxed);
        PortStats {
            rx_packets: ld(&self.rx_packets),
            rx_bytes: ld(&self.rx_bytes),
            tx_packets: ld(&self.tx_packets),
            tx_bytes: ld(&self.tx_bytes),
            rx_drops: std::array::from_fn(|i| ld(&self.rx_drops[i])),
            tx_drops: std::array::from_fn(|i| ld(&self.tx_drops[i])),
        }
    }
}

/// A cloneable, thread-safe reader of one port's counters.
#[derive(Clone, Debug, Default)]
pub struct StatsHandle(pub(crate) Arc<PortCounters>);

impl StatsHandle {
    /// New zeroed counters.
    pub fn new() -> StatsHandle {
        StatsHandle::default()
    }
    /// The counters (for the owning port to write).
    pub fn counters(&self) -> &PortCounters {
        &self.0
    }
    /// A snapshot.
    pub fn snapshot(&self) -> PortStats {
        self.0.snapshot()
    }
}

/// Errors a port returns. Per-frame problems are counted drops, not errors; an error means the
/// port as a whole could not do its job.
#[derive(Debug, thiserror::Error)]
pub enum PortError {
    /// An operating-system call failed.
    #[error("port {port}: {op} failed: {source}")]
    Os {
        /// The port's name.
        port: String,
        /// What was being done.
        op: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The named network interface does not exist.
    #[error("network interface {0:?} does not exist")]
    NoSuchInterface(String),
    /// The other end of an in-memory link is gone.
    #[error("port {0}: the other end of the link is gone")]
    Disconnected(String),
    /// A pcap file could not be read or written.
    #[error("port {port}: pcap {path}: {message}")]
    Pcap {
        /// The port's name.
        port: String,
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The backend is not available in this build or on this system.
    #[error("port backend {backend} is not available: {reason}")]
    Unsupported {
        /// The backend (for example `afxdp`).
        backend: &'static str,
        /// Why, and what to do about it.
        reason: String,
    },
    /// The port was configured wrongly.
    #[error("port {port}: invalid configuration: {reason}")]
    Config {
        /// The port's name.
        port: String,
        /// What is wrong.
        reason: String,
    },
}

/// A packet I/O port: receives and sends batches of Ethernet frames.
///
/// See the module documentation for the contract.
pub trait Port: Send {
    /// The port's name (for logs and statistics).
    fn name(&self) -> &str;

    /// Appends frames that are ready at `now` to `batch` (at most `batch.remaining()`) and
    /// returns how many were appended. Never blocks.
    fn recv_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError>;

    /// Sends every frame in `batch` at time `now`, emptying it. Frames that cannot be sent are
    /// counted as drops. Returns how many frames were handed to the link.
    fn send_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError>;

    /// Does timed work due at `now` (releases frames a link model held back, flushes file
    /// writers). Returns how many frames it sent. Call it when [`Port::poll_timeout`] says so
    /// and before shutting down.
    fn flush(&mut self, _now: Nanos) -> Result<usize, PortError> {
        Ok(0)
    }

    /// The earliest time at which the port will have work that only time can trigger (a held
    /// frame becomes due, a paced replay frame becomes ready), or `None`. Virtual-time drivers
    /// advance their clock to this.
    fn poll_timeout(&self) -> Option<Nanos> {
        None
    }

    /// A snapshot of the counters.
    fn stats(&self) -> PortStats {
        self.stats_handle().snapshot()
    }

    /// A handle to read the counters from another thread.
    fn stats_handle(&self) -> StatsHandle;

    /// A file descriptor that becomes readable when frames arrive, for poll/epoll-based
    /// waiting over many ports. `None` for backends without one.
    fn raw_fd(&self) -> Option<RawFd> {
        None
    }

    /// Blocks until a frame may be ready or `timeout` passes; returns whether one may be
    /// ready. Spurious `true` is allowed. The default sleeps for the timeout and says `true`.
    fn wait_readable(&mut self, timeout: Duration) -> Result<bool, PortError> {
        if let Some(fd) = self.raw_fd() {
            return poll_fd(self.name(), fd, timeout);
        }
        std::thread::sleep(timeout);
        Ok(true)
    }

    /// The largest frame this port sends (without FCS).
    fn max_frame_len(&self) -> usize {
        MAX_FRAME_LEN
    }
}

impl<P: Port + ?Sized> Port for Box<P> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn recv_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        (**self).recv_batch(batch, now)
    }
    fn send_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        (**self).send_batch(batch, now)
    }
    fn flush(&mut self, now: Nanos) -> Result<usize, PortError> {
        (**self).flush(now)
    }
    fn poll_timeout(&self) -> Option<Nanos> {
        (**self).poll_timeout()
    }
    fn stats(&self) -> PortStats {
        (**self).stats()
    }
    fn stats_handle(&self) -> StatsHandle {
        (**self).stats_handle()
    }
    fn raw_fd(&self) -> Option<RawFd> {
        (**self).raw_fd()
    }
    fn wait_readable(&mut self, timeout: Duration) -> Result<bool, PortError> {
        (**self).wait_readable(timeout)
    }
    fn max_frame_len(&self) -> usize {
        (**self).max_frame_len()
    }
}

/// Waits for `fd` to become readable, up to `timeout` (nanosecond resolution: `ppoll`, so a
/// wait under a millisecond really waits instead of returning at once and letting the caller
/// spin). Interrupted waits count as "maybe ready" so callers simply loop. A socket error
/// reported by the wait (`POLLERR`) is read and cleared (`SO_ERROR`) and returned, so that a
/// pending error cannot make every later wait return at once with nothing to receive.
pub fn poll_fd(port: &str, fd: RawFd, timeout: Duration) -> Result<bool, PortError> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `pfd` and `ts` are valid, initialised values that live across the call; we pass a
    // count of exactly one pollfd and no signal mask (null: the thread's mask is kept).
    let rc = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    let os_error = |op: &'static str, source: std::io::Error| PortError::Os {
        port: port.to_string(),
        op,
        source,
    };
    if rc < 0 {
        let err = std::io::Error::last_os_error();
        if err.kind() == std::io::ErrorKind::Interrupted {
            return Ok(true);
        }
        return Err(os_error("poll", err));
    }
    if rc > 0 && pfd.revents & libc::POLLERR != 0 && pfd.revents & libc::POLLIN == 0 {
        let mut code: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `code` and `len` are valid for writes and `len` holds the size of `code`;
        // SO_ERROR reads and clears the socket's pending error.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                (&mut code as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        if r == 0 && code != 0 {
            return Err(os_error("poll", std::io::Error::from_raw_os_error(code)));
        }
        return Ok(false);
    }
    Ok(rc > 0 && pfd.revents & libc::POLLIN != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_and_clear_reuses_buffers() {
        let mut b = FrameBatch::new(2);
        assert!(b.push(&[1, 2, 3], Nanos(5)));
        assert!(b.push(&[4], Nanos(6)));
        assert!(!b.push(&[7], Nanos(7)), "full batch rejects");
        assert_eq!(b.len(), 2);
        assert_eq!(b.frames()[0].data, vec![1, 2, 3]);
        assert_eq!(b.frames()[1].ts, Nanos(6));
        let p0 = b.frames()[0].data.as_ptr();
        b.clear();
        assert!(b.is_empty());
        assert!(b.push(&[9, 9], Nanos(8)));
        assert_eq!(b.frames()[0].data.as_ptr(), p0, "buffer reused");
        assert_eq!(b.frames()[0].data, vec![9, 9]);
    }

    #[test]
    fn push_owned_swaps_buffers() {
        let mut b = FrameBatch::with_buffers(1, 32);
        let out = b.push_owned(vec![1, 2], Nanos(1)).expect("room");
        assert!(out.is_some(), "the pre-allocated buffer comes back");
        let rejected = b.push_owned(vec![3], Nanos(2)).expect_err("full");
        assert_eq!(rejected, vec![3]);
        assert_eq!(b.take_data(0), Some(vec![1, 2]));
        assert_eq!(b.take_data(1), None);
    }

    #[test]
    fn retain_keeps_order() {
        let mut b = FrameBatch::new(8);
        for i in 0..6u8 {
            b.push(&[i], Nanos(u64::from(i)));
        }
        b.retain(|f| f.data[0] % 2 == 0);
        let got: Vec<u8> = b.iter().map(|f| f.data[0]).collect();
        assert_eq!(got, vec![0, 2, 4]);
    }

    #[test]
    fn counters_snapshot() {
        let h = StatsHandle::new();
        h.counters().add_rx(2, 100);
        h.counters().tx_drop(DropReason::QueueFull, 3);
        let s = h.clone().snapshot();
        assert_eq!(s.rx_packets, 2);
        assert_eq!(s.rx_bytes, 100);
        assert_eq!(s.tx_dropped(DropReason::QueueFull), 3);
        assert_eq!(s.total_drops(), 3);
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(r.index(), i);
        }
    }
}
