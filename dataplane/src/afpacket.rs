//! AF_PACKET port: a raw packet socket bound to one network interface.
//!
//! Two I/O modes:
//! - **PACKET_MMAP rings** (the default, [`AfPacketConfig::rx_ring_frames`] > 0): `TPACKET_V2`
//!   receive and transmit rings shared with the kernel ([`ring`]). Receiving reads ring slots
//!   without a system call (only an idle port polls); sending copies a batch into transmit
//!   slots and makes one `send()` for the whole batch.
//! - **`recvmmsg`/`sendmmsg`** (`rx_ring_frames: 0`): one system call per up to 64 frames,
//!   with a per-frame header and copy between user and kernel.
//!
//! - Promiscuous mode (a switch port takes every frame), removed by the kernel when the socket
//!   closes.
//! - `PACKET_IGNORE_OUTGOING` so the switch never re-receives its own transmissions; on kernels
//!   without it, frames marked `PACKET_OUTGOING` are skipped by hand.
//! - `PACKET_QDISC_BYPASS` (optional): transmit straight to the driver.
//! - `PACKET_AUXDATA`: when the kernel stripped a VLAN tag into metadata (VLAN receive offload),
//!   the tag is put back into the frame so the pipeline sees the wire bytes.
//! - The socket is created with protocol 0 (receives nothing) and only starts receiving at
//!   `bind` with `ETH_P_ALL`, so no frame of another interface can slip in between.
//!
//! A socket belongs to the network namespace it was created in; open the port inside the
//! namespace (see [`crate::netns::in_netns`]) and use it from any thread.
//!
//! Either way, received frames are copied once (out of the ring or a receive arena) into the
//! batch buffers. With rings, frames longer than a ring slot (sized for the MTU) are counted as
//! `Truncated`; without, frames longer than `snaplen` are.

use std::ffi::CString;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::port::{poll_fd, DropReason, FrameBatch, Port, PortError, StatsHandle};
use crate::time::Nanos;

mod ring;

use ring::{RingConfig, Rings};

/// Frames per `recvmmsg`/`sendmmsg` call.
const MMSG_BATCH: usize = 64;

/// Room for one control message carrying `tpacket_auxdata`, in u64 words (so the buffer is
/// aligned for `cmsghdr`).
const CMSG_WORDS: usize = 8;

/// AF_PACKET options.
#[derive(Clone, Debug)]
pub struct AfPacketConfig {
    /// Put the interface in promiscuous mode.
    pub promiscuous: bool,
    /// Bypass the transmit queueing discipline.
    pub qdisc_bypass: bool,
    /// Bytes each received frame may have; longer frames are counted as `Truncated`.
    /// 65536 also catches GRO/GSO super-frames (which the lab turns off).
    pub snaplen: usize,
    /// Socket buffer sizes in bytes (0 keeps the system default).
    pub socket_buffer: usize,
    /// Slots of the PACKET_MMAP receive ring (each sized for the interface's MTU); 0 uses
    /// `recvmmsg`/`sendmmsg` instead of rings.
    pub rx_ring_frames: usize,
    /// Slots of the PACKET_MMAP transmit ring (only with a receive ring); 0 sends with
    /// `sendmmsg`.
    pub tx_ring_frames: usize,
}

impl Default for AfPacketConfig {
    fn default() -> Self {
        AfPacketConfig {
            promiscuous: true,
            qdisc_bypass: true,
            snaplen: 65_536,
            socket_buffer: 4 << 20,
            rx_ring_frames: 2048,
            tx_ring_frames: 512,
        }
    }
}

/// The kernel's drop count since the last read goes into the port's counters before the
/// socket closes.
impl Drop for AfPacketPort {
    fn drop(&mut self) {
        self.poll_kernel_drops();
    }
}

/// An AF_PACKET port.
pub struct AfPacketPort {
    name: String,
    fd: OwnedFd,
    max_frame_len: usize,
    snaplen: usize,
    stats: StatsHandle,
    recv_calls: u32,
    /// The PACKET_MMAP rings, when configured.
    rings: Option<Rings>,
    /// Whether the transmit ring has slots that a `send()` did not take yet.
    tx_kick_pending: bool,
    rx_arena: Vec<u8>,
    rx_addrs: Vec<libc::sockaddr_ll>,
    rx_cmsg: Vec<u64>,
    rx_iov: Vec<libc::iovec>,
    rx_hdrs: Vec<libc::mmsghdr>,
    tx_iov: Vec<libc::iovec>,
    tx_hdrs: Vec<libc::mmsghdr>,
    /// Index into the batch of each queued `tx_iov` entry.
    tx_index: Vec<usize>,
}

// SAFETY: the raw pointers inside the iovec/mmsghdr scratch arrays are only written and
// dereferenced (by the kernel) during a single `recv_batch`/`send_batch` call on `&mut self`,
// where they point at buffers owned by `self` or by the batch borrowed for that call. Between
// calls they are stale and never read. The ring mapping is owned by the port and only
// accessed through `&mut self`/`&self` methods (the kernel side synchronises through each
// slot's status word). So moving the port to another thread is sound.
unsafe impl Send for AfPacketPort {}

impl std::fmt::Debug for AfPacketPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfPacketPort")
            .field("name", &self.name)
            .field("fd", &self.fd)
            .field("max_frame_len", &self.max_frame_len)
            .finish()
    }
}

fn os_err(port: &str, op: &'static str) -> PortError {
    PortError::Os {
        port: port.to_string(),
        op,
        source: std::io::Error::last_os_error(),
    }
}

fn setsockopt<T>(fd: RawFd, level: i32, opt: i32, val: &T) -> std::io::Result<()> {
    // SAFETY: `val` points at a live, initialised `T` and we pass exactly its size.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (val as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn ifreq_for(ifname: &str) -> Result<libc::ifreq, PortError> {
    let c = CString::new(ifname).map_err(|_| PortError::NoSuchInterface(ifname.to_string()))?;
    let bytes = c.as_bytes_with_nul();
    // SAFETY: ifreq is a plain C struct for which all-zero bytes are a valid value.
    let mut req: libc::ifreq = unsafe { zeroed() };
    if bytes.len() > req.ifr_name.len() {
        return Err(PortError::NoSuchInterface(ifname.to_string()));
    }
    for (d, s) in req.ifr_name.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    Ok(req)
}

impl AfPacketPort {
    /// Opens a port on `ifname` with default options.
    pub fn open(ifname: &str) -> Result<AfPacketPort, PortError> {
        AfPacketPort::open_with(ifname, &AfPacketConfig::default())
    }

    /// Opens a port on `ifname` (in the calling thread's network namespace).
    pub fn open_with(ifname: &str, cfg: &AfPacketConfig) -> Result<AfPacketPort, PortError> {
        let name = format!("afpacket:{ifname}");
        // SAFETY: plain socket(2) call; the result is checked before use.
        let raw = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        };
        if raw < 0 {
            return Err(os_err(
                &name,
                "socket(AF_PACKET) (needs root or CAP_NET_RAW)",
            ));
        }
        // SAFETY: `raw` is a freshly created descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let raw = fd.as_raw_fd();

        let mut req = ifreq_for(ifname)?;
        // SAFETY: SIOCGIFINDEX reads ifr_name and writes ifr_ifindex of the ifreq we own.
        if unsafe { libc::ioctl(raw, libc::SIOCGIFINDEX, &mut req) } < 0 {
            return Err(PortError::NoSuchInterface(ifname.to_string()));
        }
        // SAFETY: the ioctl succeeded, so the union holds ifr_ifindex.
        let ifindex = unsafe { req.ifr_ifru.ifru_ifindex };
        // SAFETY: SIOCGIFMTU reads ifr_name and writes ifr_mtu of the ifreq we own.
        if unsafe { libc::ioctl(raw, libc::SIOCGIFMTU, &mut req) } < 0 {
            return Err(os_err(&name, "ioctl(SIOCGIFMTU)"));
        }
        // SAFETY: the ioctl succeeded, so the union holds ifr_mtu.
        let mtu = unsafe { req.ifr_ifru.ifru_mtu };
        let mtu = usize::try_from(mtu).unwrap_or(1500);

        // Best effort: older kernels lack it, and outgoing frames are filtered by hand too.
        let _ = setsockopt(raw, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, &1i32);
        setsockopt(raw, libc::SOL_PACKET, libc::PACKET_AUXDATA, &1i32).map_err(|e| {
            PortError::Os {
                port: name.clone(),
                op: "setsockopt(PACKET_AUXDATA)",
                source: e,
            }
        })?;
        if cfg.qdisc_bypass {
            let _ = setsockopt(raw, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &1i32);
        }
        if cfg.socket_buffer > 0 {
            let size = i32::try_from(cfg.socket_buffer).unwrap_or(i32::MAX);
            // The FORCE variants (root) ignore the system maximum; fall back to the plain
            // ones, which the kernel clamps.
            if setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &size).is_err() {
                let _ = setsockopt(raw, libc::SOL_SOCKET, libc::SO_RCVBUF, &size);
            }
            if setsockopt(raw, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &size).is_err() {
                let _ = setsockopt(raw, libc::SOL_SOCKET, libc::SO_SNDBUF, &size);
            }
        }

        // The kernel accepts MTU + Ethernet header, plus 4 for a VLAN-tagged frame.
        let max_frame_len = mtu + 14 + 4;
        let rings = if cfg.rx_ring_frames > 0 {
            let rc = RingConfig::for_frames(max_frame_len, cfg.rx_ring_frames, cfg.tx_ring_frames);
            Some(Rings::setup(raw, rc).map_err(|(op, source)| PortError::Os {
                port: name.clone(),
                op,
                source,
            })?)
        } else {
            None
        };

        // SAFETY: sockaddr_ll is a plain C struct for which all-zero bytes are valid.
        let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = ifindex;
        // SAFETY: `sll` is a valid sockaddr_ll and we pass its exact size.
        let rc = unsafe {
            libc::bind(
                raw,
                (&sll as *const libc::sockaddr_ll).cast(),
                size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(os_err(&name, "bind"));
        }

        if cfg.promiscuous {
            // SAFETY: packet_mreq is a plain C struct for which all-zero bytes are valid.
            let mut mreq: libc::packet_mreq = unsafe { zeroed() };
            mreq.mr_ifindex = ifindex;
            mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
            setsockopt(raw, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq).map_err(|e| {
                PortError::Os {
                    port: name.clone(),
                    op: "setsockopt(PACKET_ADD_MEMBERSHIP promiscuous)",
                    source: e,
                }
            })?;
        }

        let snaplen = cfg.snaplen.max(64);
        // The receive arena is only needed without a receive ring.
        let arena = if rings.is_some() {
            0
        } else {
            MMSG_BATCH * snaplen
        };
        Ok(AfPacketPort {
            name,
            fd,
            max_frame_len,
            snaplen,
            stats: StatsHandle::new(),
            recv_calls: 0,
            rings,
            tx_kick_pending: false,
            rx_arena: vec![0; arena],
            // SAFETY: all-zero bytes are valid for these plain C structs.
            rx_addrs: vec![unsafe { zeroed() }; MMSG_BATCH],
            rx_cmsg: vec![0; MMSG_BATCH * CMSG_WORDS],
            // SAFETY: as above.
            rx_iov: vec![unsafe { zeroed() }; MMSG_BATCH],
            // SAFETY: as above.
            rx_hdrs: vec![unsafe { zeroed() }; MMSG_BATCH],
            // SAFETY: as above.
            tx_iov: vec![unsafe { zeroed() }; MMSG_BATCH],
            // SAFETY: as above.
            tx_hdrs: vec![unsafe { zeroed() }; MMSG_BATCH],
            tx_index: Vec::with_capacity(MMSG_BATCH),
        })
    }

    /// Whether the port moves frames through PACKET_MMAP rings (receive, and transmit when
    /// `tx_ring_frames` > 0).
    pub fn uses_rings(&self) -> (bool, bool) {
        match &self.rings {
            Some(r) => (true, r.config().tx_frames > 0),
            None => (false, false),
        }
    }

    /// Makes the kernel send every requested transmit-ring slot (`send()` without data). A
    /// full socket buffer or a down interface leaves slots waiting; the next kick (the next
    /// send, receive or flush) retries them.
    fn kick(&mut self) -> Result<(), PortError> {
        loop {
            // SAFETY: send(2) with no data: on a socket with a transmit ring the kernel sends
            // the ring's slots marked TP_STATUS_SEND_REQUEST; MSG_DONTWAIT keeps it
            // non-blocking.
            let rc =
                unsafe { libc::send(self.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT) };
            if rc >= 0 {
                self.tx_kick_pending = false;
                return Ok(());
            }
            let err = std::io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => {}
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::ENETDOWN)
                | Some(libc::ENXIO) => {
                    self.tx_kick_pending = true;
                    return Ok(());
                }
                _ => {
                    self.tx_kick_pending = true;
                    return Err(PortError::Os {
                        port: self.name.clone(),
                        op: "send (transmit ring)",
                        source: err,
                    });
                }
            }
        }
    }

    /// Puts `frame` into the transmit ring; when the ring is full, kicks it and waits briefly
    /// once per call (`*waited`). Returns whether the frame went in.
    fn ring_put(&mut self, frame: &[u8], waited: &mut bool) -> Result<bool, PortError> {
        let Some(rings) = self.rings.as_mut() else {
            return Ok(false);
        };
        if rings.tx_put(frame) {
            return Ok(true);
        }
        if *waited {
            return Ok(false);
        }
        *waited = true;
        // The slots ahead are either still requested (the device queue was stopped, e.g. a
        // veth whose peer runs XDP pushes back) or in flight. Kick again every 50 us for up to
        // 1 ms: polling for POLLOUT would sleep the whole time, because a requested slot only
        // moves on the next kick.
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(1);
        loop {
            self.kick()?;
            if self.tx_ring_has_room() || std::time::Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        Ok(self.rings.as_mut().is_some_and(|r| r.tx_put(frame)))
    }

    fn tx_ring_has_room(&self) -> bool {
        self.rings.as_ref().is_some_and(|r| r.tx_has_room())
    }

    /// Receive path with a ring: copies ready slots into `batch` and gives them back.
    fn recv_ring(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        if self.tx_kick_pending {
            self.kick()?;
        }
        let Some(rings) = self.rings.as_mut() else {
            return Ok(0);
        };
        let counters = self.stats.counters();
        let mut total = 0;
        let mut losing = false;
        while !batch.is_full() {
            {
                let Some(v) = rings.rx_peek() else {
                    break;
                };
                losing |= v.status & libc::TP_STATUS_LOSING != 0;
                if v.pkttype == libc::PACKET_OUTGOING {
                    // Our own transmission (kernels without PACKET_IGNORE_OUTGOING).
                } else if v.data.len() < v.len {
                    counters.rx_drop(DropReason::Truncated, 1);
                } else if v.len < 14 {
                    counters.rx_drop(DropReason::TooShort, 1);
                } else if let Some(buf) = batch.push_slot(now) {
                    if v.status & libc::TP_STATUS_VLAN_VALID != 0 {
                        let tpid = if v.status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                            v.vlan_tpid
                        } else {
                            0x8100
                        };
                        buf.extend_from_slice(&v.data[..12]);
                        buf.extend_from_slice(&tpid.to_be_bytes());
                        buf.extend_from_slice(&v.vlan_tci.to_be_bytes());
                        buf.extend_from_slice(&v.data[12..]);
                    } else {
                        buf.extend_from_slice(v.data);
                    }
                    counters.add_rx(1, buf.len() as u64);
                    total += 1;
                }
            }
            rings.rx_release();
        }
        if losing {
            self.poll_kernel_drops();
        }
        Ok(total)
    }

    /// The longest frame the kernel sends for `frame`: MTU + Ethernet header, plus 4 bytes
    /// when the frame carries an 802.1Q tag (the kernel's rule, which `max_frame_len` states
    /// for the tagged case).
    fn send_limit(&self, frame: &[u8]) -> usize {
        if frame.len() >= 14 && frame[12..14] == [0x81, 0x00] {
            self.max_frame_len
        } else {
            self.max_frame_len - 4
        }
    }

    /// Transmit path with a ring: copies the batch into transmit slots, then one kick.
    fn send_ring(&mut self, batch: &mut FrameBatch) -> Result<usize, PortError> {
        let stats = self.stats.clone();
        let counters = stats.counters();
        let mut queued = 0;
        let mut waited = false;
        let mut full = false;
        let mut result = Ok(());
        for f in batch.iter() {
            let len = f.data.len();
            if len < 14 {
                counters.tx_drop(DropReason::TooShort, 1);
            } else if len > self.send_limit(&f.data) {
                // The kernel would skip it silently (PACKET_LOSS): count it here.
                counters.tx_drop(DropReason::TooLong, 1);
            } else if full {
                counters.tx_drop(DropReason::QueueFull, 1);
            } else {
                match self.ring_put(&f.data, &mut waited) {
                    Ok(true) => {
                        counters.add_tx(1, len as u64);
                        queued += 1;
                    }
                    Ok(false) => {
                        full = true;
                        counters.tx_drop(DropReason::QueueFull, 1);
                    }
                    Err(e) => {
                        full = true;
                        counters.tx_drop(DropReason::IoError, 1);
                        result = Err(e);
                    }
                }
            }
        }
        batch.clear();
        result?;
        if queued > 0 {
            self.kick()?;
        }
        Ok(queued)
    }

    /// Hands the kernel up to `count` copies of one frame, one `sendmmsg` per
    /// [`MMSG_BATCH`] copies, every message pointing at `frame` itself (a traffic generator's
    /// fast path: nothing is built or copied in userspace per frame). Returns how many copies
    /// the kernel took; it stops early, without counting drops, when the socket is full.
    pub fn send_copies(&mut self, frame: &[u8], count: usize) -> Result<usize, PortError> {
        if frame.len() < 14 || frame.len() > self.send_limit(frame) {
            return Err(PortError::Config {
                port: self.name.clone(),
                reason: format!(
                    "a generated frame must be 14..={} bytes, not {}",
                    self.send_limit(frame),
                    frame.len()
                ),
            });
        }
        if self.uses_rings().1 {
            // With a transmit ring every send goes through the ring.
            let mut sent = 0;
            let mut waited = false;
            while sent < count && self.ring_put(frame, &mut waited)? {
                sent += 1;
            }
            self.stats
                .counters()
                .add_tx(sent as u64, (sent * frame.len()) as u64);
            if sent > 0 {
                self.kick()?;
            }
            return Ok(sent);
        }
        let iov = libc::iovec {
            iov_base: frame.as_ptr() as *mut libc::c_void,
            iov_len: frame.len(),
        };
        for k in 0..MMSG_BATCH {
            self.tx_iov[k] = iov;
            let h = &mut self.tx_hdrs[k];
            h.msg_len = 0;
            h.msg_hdr.msg_name = std::ptr::null_mut();
            h.msg_hdr.msg_namelen = 0;
            h.msg_hdr.msg_iov = &mut self.tx_iov[k];
            h.msg_hdr.msg_iovlen = 1;
            h.msg_hdr.msg_control = std::ptr::null_mut();
            h.msg_hdr.msg_controllen = 0;
            h.msg_hdr.msg_flags = 0;
        }
        let mut sent = 0;
        while sent < count {
            let want = (count - sent).min(MMSG_BATCH);
            // SAFETY: the first `want` headers point at `tx_iov` entries owned by self, which
            // point at `frame`, borrowed for the whole call; the kernel only reads them.
            let rc = unsafe {
                libc::sendmmsg(
                    self.fd.as_raw_fd(),
                    self.tx_hdrs.as_mut_ptr(),
                    want as libc::c_uint,
                    libc::MSG_DONTWAIT,
                )
            };
            if rc > 0 {
                self.stats
                    .counters()
                    .add_tx(rc as u64, rc as u64 * frame.len() as u64);
                sent += rc as usize;
                if (rc as usize) < want {
                    break;
                }
                continue;
            }
            let err = std::io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => {}
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) => break,
                _ => {
                    return Err(PortError::Os {
                        port: self.name.clone(),
                        op: "sendmmsg",
                        source: err,
                    })
                }
            }
        }
        Ok(sent)
    }

    /// Adds the kernel's count of frames dropped because the socket buffer was full.
    /// Read every 256 receives, on `stats()`, and once more when the port closes (the tail
    /// since the last read would otherwise be missing from the run's final counts).
    fn poll_kernel_drops(&self) {
        // SAFETY: tpacket_stats is a plain C struct for which all-zero bytes are valid.
        let mut st: libc::tpacket_stats = unsafe { zeroed() };
        let mut len = size_of::<libc::tpacket_stats>() as libc::socklen_t;
        // SAFETY: `st` and `len` are valid for writes of the sizes given; the kernel resets
        // its counters on each read, so adding them up is exact.
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&mut st as *mut libc::tpacket_stats).cast(),
                &mut len,
            )
        };
        if rc == 0 && st.tp_drops > 0 {
            self.stats
                .counters()
                .rx_drop(DropReason::QueueFull, u64::from(st.tp_drops));
        }
    }

    /// The VLAN tag the kernel took out of frame `i`, if any (TPID, TCI).
    fn vlan_of(&self, i: usize) -> Option<(u16, u16)> {
        let hdr = &self.rx_hdrs[i].msg_hdr;
        // SAFETY: `hdr` was filled by recvmmsg: msg_control points into `rx_cmsg` (alive,
        // owned by self) and msg_controllen was set by the kernel to the bytes it wrote, so
        // the CMSG_* walk stays inside that buffer.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(hdr);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_PACKET && (*c).cmsg_type == libc::PACKET_AUXDATA {
                    let aux: libc::tpacket_auxdata =
                        std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                    if aux.tp_status & libc::TP_STATUS_VLAN_VALID != 0 {
                        let tpid = if aux.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                            aux.tp_vlan_tpid
                        } else {
                            0x8100
                        };
                        return Some((tpid, aux.tp_vlan_tci));
                    }
                    return None;
                }
                c = libc::CMSG_NXTHDR(hdr, c);
            }
        }
        None
    }
}

impl Port for AfPacketPort {
    fn name(&self) -> &str {
        &self.name
    }

    fn recv_batch(&mut self, batch: &mut FrameBatch, now: Nanos) -> Result<usize, PortError> {
        self.recv_calls = self.recv_calls.wrapping_add(1);
        if self.recv_calls.is_multiple_of(256) {
            self.poll_kernel_drops();
        }
        if self.rings.is_some() {
            return self.recv_ring(batch, now);
        }
        let mut total = 0;
        while !batch.is_full() {
            let want = batch.remaining().min(MMSG_BATCH);
            for i in 0..want {
                self.rx_iov[i] = libc::iovec {
                    // SAFETY: i * snaplen + snaplen <= rx_arena.len() since i < MMSG_BATCH.
                    iov_base: unsafe { self.rx_arena.as_mut_ptr().add(i * self.snaplen) }.cast(),
                    iov_len: self.snaplen,
                };
                let h = &mut self.rx_hdrs[i];
                h.msg_len = 0;
                h.msg_hdr.msg_name = (&mut self.rx_addrs[i] as *mut libc::sockaddr_ll).cast();
                h.msg_hdr.msg_namelen = size_of::<libc::sockaddr_ll>() as libc::socklen_t;
                h.msg_hdr.msg_iov = &mut self.rx_iov[i];
                h.msg_hdr.msg_iovlen = 1;
                h.msg_hdr.msg_control = self.rx_cmsg[i * CMSG_WORDS..].as_mut_ptr().cast();
                h.msg_hdr.msg_controllen = CMSG_WORDS * 8;
                h.msg_hdr.msg_flags = 0;
            }
            // SAFETY: the first `want` headers point at buffers owned by self that stay
            // alive and unaliased for the duration of the call; MSG_DONTWAIT keeps it
            // non-blocking.
            let rc = unsafe {
                libc::recvmmsg(
                    self.fd.as_raw_fd(),
                    self.rx_hdrs.as_mut_ptr(),
                    want as libc::c_uint,
                    libc::MSG_DONTWAIT,
                    std::ptr::null_mut(),
                )
            };
            if rc < 0 {
                let err = std::io::Error::last_os_error();
                return match err.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(total),
                    Some(libc::ENETDOWN) => Ok(total),
                    _ => Err(PortError::Os {
                        port: self.name.clone(),
                        op: "recvmmsg",
                        source: err,
                    }),
                };
            }
            let got = rc as usize;
            let counters = self.stats.counters();
            for i in 0..got {
                if self.rx_addrs[i].sll_pkttype == libc::PACKET_OUTGOING {
                    continue;
                }
                let len = self.rx_hdrs[i].msg_len as usize;
                if self.rx_hdrs[i].msg_hdr.msg_flags & libc::MSG_TRUNC != 0 || len > self.snaplen {
                    counters.rx_drop(DropReason::Truncated, 1);
                    continue;
                }
                if len < 14 {
                    counters.rx_drop(DropReason::TooShort, 1);
                    continue;
                }
                let vlan = self.vlan_of(i);
                let data = &self.rx_arena[i * self.snaplen..i * self.snaplen + len];
                let Some(buf) = batch.push_slot(now) else {
                    break;
                };
                match vlan {
                    None => buf.extend_from_slice(data),
                    Some((tpid, tci)) => {
                        buf.extend_from_slice(&data[..12]);
                        buf.extend_from_slice(&tpid.to_be_bytes());
                        buf.extend_from_slice(&tci.to_be_bytes());
                        buf.extend_from_slice(&data[12..]);
                    }
                }
                counters.add_rx(1, buf.len() as u64);
                total += 1;
            }
            if got < want {
                break;
            }
        }
        Ok(total)
    }

    fn send_batch(&mut self, batch: &mut FrameBatch, _now: Nanos) -> Result<usize, PortError> {
        if self.uses_rings().1 {
            return self.send_ring(batch);
        }
        let counters = self.stats.counters();
        let mut sent = 0;
        let mut start = 0;
        let n = batch.len();
        while start < n {
            // Queue up to MMSG_BATCH valid frames.
            self.tx_index.clear();
            let mut i = start;
            while i < n && self.tx_index.len() < MMSG_BATCH {
                let len = batch.frames()[i].data.len();
                if len < 14 {
                    counters.tx_drop(DropReason::TooShort, 1);
                } else if len > self.max_frame_len {
                    counters.tx_drop(DropReason::TooLong, 1);
                } else {
                    self.tx_index.push(i);
                }
                i += 1;
            }
            start = i;
            let q = self.tx_index.len();
            for (k, &fi) in self.tx_index.iter().enumerate() {
                let data = &batch.frames()[fi].data;
                self.tx_iov[k] = libc::iovec {
                    iov_base: data.as_ptr() as *mut libc::c_void,
                    iov_len: data.len(),
                };
                let h = &mut self.tx_hdrs[k];
                h.msg_len = 0;
                h.msg_hdr.msg_name = std::ptr::null_mut();
                h.msg_hdr.msg_namelen = 0;
                h.msg_hdr.msg_iov = &mut self.tx_iov[k];
                h.msg_hdr.msg_iovlen = 1;
                h.msg_hdr.msg_control = std::ptr::null_mut();
                h.msg_hdr.msg_controllen = 0;
                h.msg_hdr.msg_flags = 0;
            }
            let mut off = 0;
            let mut retried = false;
            while off < q {
                // SAFETY: headers off..q point at frame buffers of `batch`, which is
                // borrowed (and not modified) for the whole call; the kernel only reads them.
                let rc = unsafe {
                    libc::sendmmsg(
                        self.fd.as_raw_fd(),
                        self.tx_hdrs[off..].as_mut_ptr(),
                        (q - off) as libc::c_uint,
                        libc::MSG_DONTWAIT,
                    )
                };
                if rc > 0 {
                    for &fi in &self.tx_index[off..off + rc as usize] {
                        counters.add_tx(1, batch.frames()[fi].data.len() as u64);
                    }
                    sent += rc as usize;
                    off += rc as usize;
                    continue;
                }
                let err = std::io::Error::last_os_error();
                match err.raw_os_error() {
                    Some(libc::EINTR) => {}
                    Some(libc::EAGAIN) | Some(libc::ENOBUFS) if !retried => {
                        // The socket buffer is full: give the driver a moment once, then
                        // tail-drop what is left rather than block.
                        retried = true;
                        let mut pfd = libc::pollfd {
                            fd: self.fd.as_raw_fd(),
                            events: libc::POLLOUT,
                            revents: 0,
                        };
                        // SAFETY: one valid pollfd, count 1.
                        unsafe { libc::poll(&mut pfd, 1, 1) };
                    }
                    Some(libc::EAGAIN) | Some(libc::ENOBUFS) => {
                        counters.tx_drop(DropReason::QueueFull, (q - off) as u64);
                        off = q;
                    }
                    Some(libc::EMSGSIZE) => {
                        counters.tx_drop(DropReason::TooLong, 1);
                        off += 1;
                    }
                    Some(libc::ENETDOWN) | Some(libc::ENXIO) => {
                        counters.tx_drop(DropReason::LinkDown, (q - off) as u64);
                        off = q;
                    }
                    _ => {
                        counters.tx_drop(DropReason::IoError, (n - start + q - off) as u64);
                        batch.clear();
                        return Err(PortError::Os {
                            port: self.name.clone(),
                            op: "sendmmsg",
                            source: err,
                        });
                    }
                }
            }
        }
        batch.clear();
        Ok(sent)
    }

    fn stats_handle(&self) -> StatsHandle {
        self.stats.clone()
    }

    fn stats(&self) -> crate::port::PortStats {
        self.poll_kernel_drops();
        self.stats.snapshot()
    }

    fn raw_fd(&self) -> Option<RawFd> {
        Some(self.fd.as_raw_fd())
    }

    fn wait_readable(&mut self, timeout: std::time::Duration) -> Result<bool, PortError> {
        if self.rings.as_ref().is_some_and(|r| r.rx_ready()) {
            return Ok(true);
        }
        poll_fd(&self.name, self.fd.as_raw_fd(), timeout)
    }

    fn flush(&mut self, _now: Nanos) -> Result<usize, PortError> {
        if self.tx_kick_pending {
            self.kick()?;
        }
        Ok(0)
    }

    fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }
}
