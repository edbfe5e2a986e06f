//! AF_PACKET port: a raw packet socket bound to one network interface, batched with
//! `recvmmsg`/`sendmmsg`.
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
//! Received frames are copied once out of a per-port receive arena into the batch buffers;
//! sends use the batch buffers directly (no copy).

use std::ffi::CString;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::port::{poll_fd, DropReason, FrameBatch, Port, PortError, StatsHandle};
use crate::time::Nanos;

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
}

impl Default for AfPacketConfig {
    fn default() -> Self {
        AfPacketConfig {
            promiscuous: true,
            qdisc_bypass: true,
            snaplen: 65_536,
            socket_buffer: 4 << 20,
        }
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
// calls they are stale and never read, so moving the port to another thread is sound.
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
        Ok(AfPacketPort {
            name,
            fd,
            // The kernel accepts MTU + Ethernet header, plus 4 for a VLAN-tagged frame.
            max_frame_len: mtu + 14 + 4,
            snaplen,
            stats: StatsHandle::new(),
            recv_calls: 0,
            rx_arena: vec![0; MMSG_BATCH * snaplen],
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

    /// Adds the kernel's count of frames dropped because the socket buffer was full.
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
        if self.recv_calls % 256 == 0 {
            self.poll_kernel_drops();
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
        poll_fd(&self.name, self.fd.as_raw_fd(), timeout)
    }

    fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }
}
