//! AF_XDP port (cargo feature `afxdp`): an XDP program (`xdp/redirect.c`, loaded with aya)
//! redirects the interface queue's frames into an AF_XDP socket whose rings are driven with
//! xdpilone. Copy mode works everywhere (veth included); `zerocopy` asks the driver for
//! zero-copy and fails where it has none.
//!
//! One UMEM of [`FRAMES`] chunks of [`FRAME_SIZE`] bytes: the first half is handed to the fill
//! ring for receiving, the second half is the transmit pool (recycled from the completion
//! ring). Received frames are copied out into the batch and their chunks go straight back to
//! the fill ring. The XDP program is detached when the port is dropped.
//!
//! Frames the kernel could not hand to the socket (rx ring full, no fill-ring buffer) are
//! read from the socket's `XDP_STATISTICS` and counted as `QueueFull` receive drops.
//!
//! Like AF_PACKET sockets, the port belongs to the network namespace it is opened in.

use std::ffi::CString;
use std::num::NonZeroU32;
use std::os::fd::RawFd;
use std::ptr::NonNull;

use aya::maps::XskMap;
use aya::programs::{Xdp, XdpMode};
use aya::Ebpf;
use xdpilone::xdp::XdpDesc;
use xdpilone::{DeviceQueue, IfInfo, RingRx, RingTx, Socket, SocketConfig, Umem, UmemConfig};

use crate::port::{poll_fd, DropReason, FrameBatch, Port, PortError, StatsHandle};
use crate::time::Nanos;

/// Bytes per UMEM chunk (one frame each).
pub const FRAME_SIZE: u32 = 4096;
/// Chunks in the UMEM.
pub const FRAMES: u32 = 4096;
/// Entries per ring (fill, completion, rx, tx).
const RING: u32 = 2048;
/// How long [`AfXdpPort::open`] retries a bind refused with EBUSY (a dead process's socket
/// still being released by the kernel).
const BIND_BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

static XDP_OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/redirect.o"));

/// Anonymous page-aligned memory for the UMEM, unmapped on drop.
struct Area {
    ptr: NonNull<u8>,
    len: usize,
}

impl Area {
    fn new(len: usize) -> std::io::Result<Area> {
        // SAFETY: an anonymous private mapping with no address hint; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let ptr =
            NonNull::new(p.cast::<u8>()).ok_or_else(|| std::io::Error::other("mmap gave null"))?;
        Ok(Area { ptr, len })
    }

    fn as_slice_ptr(&self) -> NonNull<[u8]> {
        NonNull::slice_from_raw_parts(self.ptr, self.len)
    }

    /// The chunk starting at `addr`, `len` bytes, if it lies inside the area.
    fn chunk(&self, addr: u64, len: usize) -> Option<*mut u8> {
        let a = usize::try_from(addr).ok()?;
        if a.checked_add(len)? > self.len {
            return None;
        }
        // SAFETY: a + len <= self.len, so the offset stays inside the mapping.
        Some(unsafe { self.ptr.as_ptr().add(a) })
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly what mmap returned; every user of the memory (sockets,
        // rings) is dropped before the Area (field order in AfXdpPort).
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

/// An AF_XDP port.
pub struct AfXdpPort {
    name: String,
    // Field order is drop order: detach the program first, then close rings and sockets, and
    // unmap the memory last.
    _ebpf: Ebpf,
    rx: RingRx,
    tx: RingTx,
    dev: DeviceQueue,
    _umem: Umem,
    fd: RawFd,
    free_tx: Vec<u64>,
    refill: Vec<u64>,
    tx_descs: Vec<XdpDesc>,
    stats: StatsHandle,
    /// Kernel receive drops already counted (the socket's statistics are cumulative).
    kernel_drops_seen: std::cell::Cell<u64>,
    recv_calls: u32,
    area: Area,
}

// SAFETY: the port exclusively owns its UMEM mapping, rings and sockets; none of them has
// thread affinity (they are memory mappings and file descriptors), and all access goes
// through `&mut self` (the drop counter's Cell only through the port's own methods), so
// moving the port to another thread is sound.
unsafe impl Send for AfXdpPort {}

impl std::fmt::Debug for AfXdpPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfXdpPort")
            .field("name", &self.name)
            .finish()
    }
}

fn err(port: &str, op: &'static str, e: impl std::fmt::Display) -> PortError {
    PortError::Os {
        port: port.to_string(),
        op,
        source: std::io::Error::other(e.to_string()),
    }
}

impl AfXdpPort {
    /// Opens an AF_XDP port on `ifname` queue `queue` (in the calling thread's network
    /// namespace). Needs root.
    pub fn open(ifname: &str, queue: u32, zerocopy: bool) -> Result<AfXdpPort, PortError> {
        let name = format!("afxdp:{ifname}");
        let c_if =
            CString::new(ifname).map_err(|_| PortError::NoSuchInterface(ifname.to_string()))?;
        let area =
            Area::new((FRAMES * FRAME_SIZE) as usize).map_err(|e| err(&name, "mmap UMEM", e))?;
        let cfg = UmemConfig {
            fill_size: RING,
            complete_size: RING,
            frame_size: FRAME_SIZE,
            headroom: 0,
            flags: 0,
        };
        // SAFETY: the area is page aligned (fresh mmap), FRAMES * FRAME_SIZE long, and lives in
        // the port next to the Umem, dropped after it.
        let umem = unsafe { Umem::new(cfg, area.as_slice_ptr()) }
            .map_err(|e| err(&name, "create UMEM", e))?;
        let mut info = IfInfo::invalid();
        info.from_name(&c_if)
            .map_err(|_| PortError::NoSuchInterface(ifname.to_string()))?;
        info.set_queue(queue);
        let sock = Socket::with_shared(&info, &umem).map_err(|e| err(&name, "AF_XDP socket", e))?;
        let mut dev = umem
            .fq_cq(&sock)
            .map_err(|e| err(&name, "fill/completion rings", e))?;
        let ring = NonZeroU32::new(RING);
        let bind_flags = if zerocopy {
            SocketConfig::XDP_BIND_ZEROCOPY
        } else {
            SocketConfig::XDP_BIND_COPY
        };
        let user = umem
            .rx_tx(
                &sock,
                &SocketConfig {
                    rx_size: ring,
                    tx_size: ring,
                    bind_flags,
                },
            )
            .map_err(|e| err(&name, "rx/tx rings", e))?;
        let rx = user.map_rx().map_err(|e| err(&name, "map rx ring", e))?;
        let tx = user.map_tx().map_err(|e| err(&name, "map tx ring", e))?;
        // A socket of a process that just died (SIGKILL, crash) may still hold the queue for
        // a moment: the kernel releases it asynchronously after the last descriptor closes, and
        // binding meanwhile fails with EBUSY. Retry for a while before giving up.
        let t0 = std::time::Instant::now();
        let mut bound = umem.bind(&user);
        while matches!(&bound, Err(e) if e.get_raw() == libc::EBUSY)
            && t0.elapsed() < BIND_BUSY_WAIT
        {
            std::thread::sleep(std::time::Duration::from_millis(50));
            bound = umem.bind(&user);
        }
        bound.map_err(|e| {
            err(
                &name,
                if zerocopy {
                    "bind (zero-copy: does the driver support it?)"
                } else {
                    "bind"
                },
                e,
            )
        })?;
        let fd = user.as_raw_fd();

        // First half of the chunks to the fill ring, the second half for transmit.
        let half = FRAMES / 2;
        {
            let mut w = dev.fill(half);
            w.insert((0..half).map(|i| u64::from(i * FRAME_SIZE)));
            w.commit();
        }
        let free_tx = (half..FRAMES).map(|i| u64::from(i * FRAME_SIZE)).collect();

        let mut ebpf = Ebpf::load(XDP_OBJECT).map_err(|e| err(&name, "load XDP object", e))?;
        let prog: &mut Xdp = ebpf
            .program_mut("pisa_xsk_redirect")
            .ok_or_else(|| err(&name, "find XDP program", "missing in object"))?
            .try_into()
            .map_err(|e| err(&name, "XDP program type", e))?;
        prog.load().map_err(|e| err(&name, "load XDP program", e))?;
        if prog.attach(ifname, XdpMode::Driver).is_err() {
            prog.attach(ifname, XdpMode::Skb)
                .map_err(|e| err(&name, "attach XDP program", e))?;
        }
        let mut map: XskMap<_> = ebpf
            .map_mut("xsks_map")
            .ok_or_else(|| err(&name, "find xsks_map", "missing in object"))?
            .try_into()
            .map_err(|e| err(&name, "xsks_map type", e))?;
        map.set(queue, fd, 0)
            .map_err(|e| err(&name, "register socket in xsks_map", e))?;

        Ok(AfXdpPort {
            name,
            _ebpf: ebpf,
            rx,
            tx,
            dev,
            _umem: umem,
            fd,
            free_tx,
            refill: Vec::with_capacity(RING as usize),
            tx_descs: Vec::with_capacity(RING as usize),
            stats: StatsHandle::new(),
            kernel_drops_seen: std::cell::Cell::new(0),
            recv_calls: 0,
            area,
        })
    }

    /// Copy mode transmits only on a kick (`sendto`), and the kernel moves at most a small
    /// batch (32 frames) per kick, so kick until the ring is drained or stops moving.
    fn kick_tx(&mut self) {
        let mut last = u32::MAX;
        loop {
            let pending = self.tx.pending();
            if pending == 0 || pending == last {
                break;
            }
            last = pending;
            self.tx.wake();
        }
    }

    /// Puts `descs` on the tx ring and kicks it; descriptors that do not fit are dropped
    /// (`QueueFull`) and their chunks return to the free list. Returns how many went out.
    fn push_descs(&mut self, descs: &mut Vec<XdpDesc>) -> usize {
        if descs.is_empty() {
            return 0;
        }
        let mut put = self.transmit(descs, 0);
        if put < descs.len() {
            // The ring is really full: let the kernel take some, then try once more.
            self.kick_tx();
            put = self.transmit(descs, put);
        }
        let counters = self.stats.counters();
        for d in &descs[..put] {
            counters.add_tx(1, u64::from(d.len));
        }
        for d in &descs[put..] {
            counters.tx_drop(DropReason::QueueFull, 1);
            self.free_tx.push(d.addr);
        }
        descs.clear();
        self.kick_tx();
        put
    }

    /// Puts `descs[from..]` on the tx ring, as many as fit; returns the index of the first one
    /// not put. A reservation is served from xdpilone's cached view of the kernel's consumer
    /// head, which refreshes only when nothing at all is free: one call may put fewer than
    /// fit, so go on until a call puts none.
    fn transmit(&mut self, descs: &[XdpDesc], from: usize) -> usize {
        let mut put = from;
        while put < descs.len() {
            let mut w = self.tx.transmit((descs.len() - put) as u32);
            let n = w.insert(descs[put..].iter().copied()) as usize;
            w.commit();
            if n == 0 {
                break;
            }
            put += n;
        }
        put
    }

    /// Counts the frames the kernel dropped for this socket since the last look.
    fn poll_kernel_drops(&self) {
        if let Ok(st) = self.dev.statistics_v2() {
            let total = st.rx_dropped + st.rx_ring_full;
            let new = total.saturating_sub(self.kernel_drops_seen.get());
            if new > 0 {
                self.kernel_drops_seen.set(total);
                self.stats.counters().rx_drop(DropReason::QueueFull, new);
            }
        }
    }

    fn reclaim_completions(&mut self) {
        let mut c = self.dev.complete(RING);
        while let Some(addr) = c.read() {
            self.free_tx.push(addr & !u64::from(FRAME_SIZE - 1));
        }
        c.release();
    }
}

impl Port for AfXdpPort {
    fn name(&self) -> &str {
        &self.name
    }

    fn recv_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        self.recv_calls = self.recv_calls.wrapping_add(1);
        if self.recv_calls.is_multiple_of(1024) {
            self.poll_kernel_drops();
        }
        let want = u32::try_from(batch.remaining())
            .unwrap_or(u32::MAX)
            .min(RING);
        if want == 0 {
            return Ok(0);
        }
        let counters = self.stats.counters();
        let mut n = 0;
        // `refill` still holds any chunks the fill ring did not take last time.
        {
            let mut r = self.rx.receive(want);
            while let Some(XdpDesc { addr, len, .. }) = r.read() {
                self.refill.push(addr & !u64::from(FRAME_SIZE - 1));
                let len = len as usize;
                let Some(p) = self.area.chunk(addr, len) else {
                    counters.rx_drop(DropReason::IoError, 1);
                    continue;
                };
                if len < 14 {
                    counters.rx_drop(DropReason::TooShort, 1);
                    continue;
                }
                // SAFETY: the kernel handed this chunk to us through the rx ring, `chunk`
                // checked it lies in the UMEM, and we give it back to the fill ring only
                // after this copy.
                let data = unsafe { std::slice::from_raw_parts(p, len) };
                if batch.push(data, now) {
                    counters.add_rx(1, len as u64);
                    n += 1;
                }
            }
            r.release();
        }
        // Back to the fill ring. As on the tx ring, one reservation may be served from a
        // stale view of the kernel's consumer head and take fewer than fit: go on until a call
        // takes none. What is left (the ring is sized for every receive chunk, so nothing
        // should be) waits in `refill` for the next call; it must stay in the receive pool,
        // or receive buffers would drain away into the transmit pool and the kernel would
        // drop frames for want of fill buffers.
        let mut done = 0;
        while done < self.refill.len() {
            let mut w = self.dev.fill((self.refill.len() - done) as u32);
            let put = w.insert(self.refill[done..].iter().copied()) as usize;
            w.commit();
            if put == 0 {
                break;
            }
            done += put;
        }
        self.refill.drain(..done);
        Ok(n)
    }

    fn send_batch(&mut self, batch: &mut FrameBatch, _now: Nanos) -> Result<usize, PortError> {
        self.reclaim_completions();
        let stats = self.stats.clone();
        let counters = stats.counters();
        let mut descs = std::mem::take(&mut self.tx_descs);
        descs.clear();
        let mut sent = 0;
        for f in batch.iter() {
            let len = f.data.len();
            if len < 14 {
                counters.tx_drop(DropReason::TooShort, 1);
                continue;
            }
            if len > FRAME_SIZE as usize {
                counters.tx_drop(DropReason::TooLong, 1);
                continue;
            }
            if self.free_tx.is_empty() {
                // Every chunk is in flight: hand over what is queued, take back what is done.
                sent += self.push_descs(&mut descs);
                self.reclaim_completions();
            }
            let Some(addr) = self.free_tx.pop() else {
                counters.tx_drop(DropReason::QueueFull, 1);
                continue;
            };
            let Some(p) = self.area.chunk(addr, len) else {
                counters.tx_drop(DropReason::IoError, 1);
                continue;
            };
            // SAFETY: `addr` came from our free list (not owned by the kernel), `chunk`
            // checked the range, and the source is a distinct heap buffer.
            unsafe { std::ptr::copy_nonoverlapping(f.data.as_ptr(), p, len) };
            descs.push(XdpDesc {
                addr,
                len: len as u32,
                options: 0,
            });
        }
        sent += self.push_descs(&mut descs);
        self.tx_descs = descs;
        batch.clear();
        Ok(sent)
    }

    fn flush(&mut self, _now: Nanos) -> Result<usize, PortError> {
        self.kick_tx();
        self.reclaim_completions();
        Ok(0)
    }

    fn stats_handle(&self) -> StatsHandle {
        self.stats.clone()
    }

    fn stats(&self) -> crate::port::PortStats {
        self.poll_kernel_drops();
        self.stats.snapshot()
    }

    fn raw_fd(&self) -> Option<RawFd> {
        Some(self.fd)
    }

    fn wait_readable(&mut self, timeout: std::time::Duration) -> Result<bool, PortError> {
        if self.rx.available() > 0 {
            return Ok(true);
        }
        poll_fd(&self.name, self.fd, timeout)
    }

    fn max_frame_len(&self) -> usize {
        FRAME_SIZE as usize
    }
}
