//! PACKET_MMAP rings (`TPACKET_V2`) of an AF_PACKET socket: one receive ring and one transmit
//! ring of fixed-size frames in a single shared mapping.
//!
//! Receive: the kernel copies each frame into the next free ring slot from its softirq and
//! flips the slot's status to `TP_STATUS_USER`; the port reads slots in order without a system
//! call and hands each back (`TP_STATUS_KERNEL`). Transmit: the port writes frames into free
//! slots (`TP_STATUS_AVAILABLE`), marks them `TP_STATUS_SEND_REQUEST`, and one `send()` per
//! batch makes the kernel send every requested slot.
//!
//! `TPACKET_V2` rather than `V3`: a V3 receive block reaches userspace only when it is full or
//! its retire timer fires (at least 1 ms), which at low rates puts up to that timer into every
//! frame's latency; V2 hands over each frame as soon as it is written.
//!
//! Only this module touches the mapping; it hands out copies and plain slices, and every
//! status word is read with acquire and written with release ordering, so frame bytes are
//! never read before the kernel finished them nor given back before we finished.

use std::mem::size_of;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

/// Offset of the `sockaddr_ll` after a V2 frame header (the header, TPACKET-aligned).
const SLL_OFFSET: usize = (size_of::<libc::tpacket2_hdr>() + libc::TPACKET_ALIGNMENT - 1)
    & !(libc::TPACKET_ALIGNMENT - 1);
/// Where a transmit frame's bytes start in its slot (`TPACKET2_HDRLEN - sizeof(sockaddr_ll)`,
/// the kernel's rule without `PACKET_TX_HAS_OFF`).
const TX_DATA_OFFSET: usize = libc::TPACKET2_HDRLEN - size_of::<libc::sockaddr_ll>();
/// Headroom a receive slot needs before the frame: the header, the address and the kernel's
/// alignment of the network header (generous: 128 bytes).
const RX_HEADROOM: usize = 128;
/// Bytes per ring block (the kernel allocates blocks as contiguous pages).
const BLOCK_SIZE: usize = 1 << 16;

/// Ring sizes of one socket.
#[derive(Clone, Copy, Debug)]
pub(super) struct RingConfig {
    /// Bytes per slot, a power of two.
    pub frame_size: usize,
    /// Receive slots.
    pub rx_frames: usize,
    /// Transmit slots (0: no transmit ring).
    pub tx_frames: usize,
}

impl RingConfig {
    /// Slots big enough for frames of `max_frame_len` bytes.
    pub fn for_frames(max_frame_len: usize, rx_frames: usize, tx_frames: usize) -> RingConfig {
        let frame_size = (max_frame_len + RX_HEADROOM).next_power_of_two().max(2048);
        let per_block = (BLOCK_SIZE / frame_size).max(1);
        let round = |n: usize| n.div_ceil(per_block) * per_block;
        RingConfig {
            frame_size,
            rx_frames: round(rx_frames.max(1)),
            tx_frames: if tx_frames == 0 { 0 } else { round(tx_frames) },
        }
    }

    fn block_size(&self) -> usize {
        BLOCK_SIZE.max(self.frame_size)
    }

    fn request(&self, frames: usize) -> libc::tpacket_req {
        let block = self.block_size();
        libc::tpacket_req {
            tp_block_size: block as u32,
            tp_block_nr: (frames * self.frame_size / block) as u32,
            tp_frame_size: self.frame_size as u32,
            tp_frame_nr: frames as u32,
        }
    }

    /// The most frame bytes a transmit slot holds.
    pub fn tx_capacity(&self) -> usize {
        self.frame_size - TX_DATA_OFFSET
    }
}

/// One received frame, still in its ring slot.
pub(super) struct RxView<'a> {
    /// The slot's status word (VLAN and loss flags).
    pub status: u32,
    /// The frame's length on the wire.
    pub len: usize,
    /// The bytes the slot holds (shorter than `len` when truncated).
    pub data: &'a [u8],
    /// `sll_pkttype` (PACKET_OUTGOING for our own transmissions).
    pub pkttype: u8,
    /// VLAN TCI and TPID the kernel took out of the frame (valid per `status`).
    pub vlan_tci: u16,
    pub vlan_tpid: u16,
}

/// The rings of one socket and the positions in them.
pub(super) struct Rings {
    map: NonNull<u8>,
    map_len: usize,
    cfg: RingConfig,
    rx_head: usize,
    tx_head: usize,
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

impl Rings {
    /// Switches `fd` to TPACKET_V2, sets up the rings and maps them. Must run before `bind`.
    /// Returns the failing step's name with the error.
    pub fn setup(fd: RawFd, cfg: RingConfig) -> Result<Rings, (&'static str, std::io::Error)> {
        let v2 = libc::tpacket_versions::TPACKET_V2 as i32;
        setsockopt(fd, libc::SOL_PACKET, libc::PACKET_VERSION, &v2)
            .map_err(|e| ("setsockopt(PACKET_VERSION TPACKET_V2)", e))?;
        if cfg.tx_frames > 0 {
            // Malformed transmit slots are skipped instead of stopping the ring (settable
            // only before any ring exists).
            setsockopt(fd, libc::SOL_PACKET, libc::PACKET_LOSS, &1i32)
                .map_err(|e| ("setsockopt(PACKET_LOSS)", e))?;
        }
        setsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_RX_RING,
            &cfg.request(cfg.rx_frames),
        )
        .map_err(|e| ("setsockopt(PACKET_RX_RING)", e))?;
        if cfg.tx_frames > 0 {
            setsockopt(
                fd,
                libc::SOL_PACKET,
                libc::PACKET_TX_RING,
                &cfg.request(cfg.tx_frames),
            )
            .map_err(|e| ("setsockopt(PACKET_TX_RING)", e))?;
        }
        let map_len = (cfg.rx_frames + cfg.tx_frames) * cfg.frame_size;
        // SAFETY: maps the socket's rings (receive ring first, then transmit ring, as the
        // kernel lays them out); the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_LOCKED | libc::MAP_POPULATE,
                fd,
                0,
            )
        };
        let p = if p == libc::MAP_FAILED {
            // MAP_LOCKED needs RLIMIT_MEMLOCK; retry without it.
            // SAFETY: as above.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    map_len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(("mmap(packet rings)", std::io::Error::last_os_error()));
            }
            p
        } else {
            p
        };
        let map = NonNull::new(p.cast::<u8>())
            .ok_or(("mmap(packet rings)", std::io::Error::other("null mapping")))?;
        Ok(Rings {
            map,
            map_len,
            cfg,
            rx_head: 0,
            tx_head: 0,
        })
    }

    pub fn config(&self) -> RingConfig {
        self.cfg
    }

    /// Slot `i` of the mapping (receive slots first, then transmit slots).
    fn slot(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.cfg.rx_frames + self.cfg.tx_frames);
        // SAFETY: i < rx_frames + tx_frames, so the offset stays inside the mapping, whose
        // slots are contiguous (every block holds a whole number of slots).
        unsafe { self.map.as_ptr().add(i * self.cfg.frame_size) }
    }

    /// The status word of `slot` (a pointer from [`Rings::slot`]).
    fn status(&self, slot: *mut u8) -> &AtomicU32 {
        // SAFETY: every slot starts with a `tpacket2_hdr`, whose first field is the u32
        // status word, 4-byte aligned (slots are page-aligned multiples of 2 KiB). The kernel
        // and we hand the slot back and forth through this word, so it is accessed
        // atomically; the reference borrows `self`, and the mapping lives until Drop.
        unsafe { AtomicU32::from_ptr(slot.cast::<u32>()) }
    }

    /// Whether the next receive slot holds a frame.
    pub fn rx_ready(&self) -> bool {
        self.status(self.slot(self.rx_head)).load(Ordering::Acquire) & libc::TP_STATUS_USER != 0
    }

    /// The next received frame, if any; give it back with [`Rings::rx_release`].
    pub fn rx_peek(&self) -> Option<RxView<'_>> {
        let slot = self.slot(self.rx_head);
        let status = self.status(slot).load(Ordering::Acquire);
        if status & libc::TP_STATUS_USER == 0 {
            return None;
        }
        // SAFETY: the slot is ours (status USER, read with acquire above), starts with a
        // tpacket2_hdr and is followed by a sockaddr_ll at SLL_OFFSET; read_unaligned makes
        // no alignment assumption.
        let (h, sll) = unsafe {
            (
                std::ptr::read_unaligned(slot.cast::<libc::tpacket2_hdr>()),
                std::ptr::read_unaligned(slot.add(SLL_OFFSET).cast::<libc::sockaddr_ll>()),
            )
        };
        let mac = usize::from(h.tp_mac);
        let snap = h.tp_snaplen as usize;
        // A header the kernel wrote wrongly would point outside the slot: show no bytes.
        let data = if mac
            .checked_add(snap)
            .is_some_and(|e| e <= self.cfg.frame_size)
        {
            // SAFETY: mac + snap lies inside this slot, which is ours until rx_release.
            unsafe { std::slice::from_raw_parts(slot.add(mac), snap) }
        } else {
            &[]
        };
        Some(RxView {
            status,
            len: h.tp_len as usize,
            data,
            pkttype: sll.sll_pkttype,
            vlan_tci: h.tp_vlan_tci,
            vlan_tpid: h.tp_vlan_tpid,
        })
    }

    /// Gives the current receive slot back to the kernel and moves to the next.
    pub fn rx_release(&mut self) {
        self.status(self.slot(self.rx_head))
            .store(libc::TP_STATUS_KERNEL, Ordering::Release);
        self.rx_head = (self.rx_head + 1) % self.cfg.rx_frames;
    }

    /// Writes `frame` into the next transmit slot and marks it for sending. Returns `false`
    /// (and writes nothing) when that slot is still the kernel's (the ring is full) or the
    /// frame does not fit a slot.
    pub fn tx_put(&mut self, frame: &[u8]) -> bool {
        if self.cfg.tx_frames == 0 || frame.len() > self.cfg.tx_capacity() {
            return false;
        }
        let slot = self.slot(self.cfg.rx_frames + self.tx_head);
        let status = self.status(slot);
        if status.load(Ordering::Acquire) != libc::TP_STATUS_AVAILABLE {
            return false;
        }
        // SAFETY: the slot is ours (AVAILABLE, read with acquire); the frame fits after the
        // data offset (checked against tx_capacity), and the header fields written are inside
        // the slot. The status is published last, with release ordering.
        unsafe {
            std::ptr::copy_nonoverlapping(frame.as_ptr(), slot.add(TX_DATA_OFFSET), frame.len());
            let h = slot.cast::<libc::tpacket2_hdr>();
            std::ptr::addr_of_mut!((*h).tp_len).write_unaligned(frame.len() as u32);
            std::ptr::addr_of_mut!((*h).tp_snaplen).write_unaligned(frame.len() as u32);
        }
        status.store(libc::TP_STATUS_SEND_REQUEST, Ordering::Release);
        self.tx_head = (self.tx_head + 1) % self.cfg.tx_frames;
        true
    }

    /// Whether the next transmit slot is free.
    pub fn tx_has_room(&self) -> bool {
        self.cfg.tx_frames > 0
            && self
                .status(self.slot(self.cfg.rx_frames + self.tx_head))
                .load(Ordering::Acquire)
                == libc::TP_STATUS_AVAILABLE
    }
}

impl Drop for Rings {
    fn drop(&mut self) {
        // SAFETY: map/map_len are exactly what mmap returned, and no view into the mapping
        // outlives `&self` borrows, which have ended.
        unsafe {
            libc::munmap(self.map.as_ptr().cast(), self.map_len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_sizes_cover_the_frame_and_fill_whole_blocks() {
        let c = RingConfig::for_frames(1518, 1000, 300);
        assert_eq!(c.frame_size, 2048);
        assert_eq!(c.rx_frames % (BLOCK_SIZE / 2048), 0);
        assert!(c.rx_frames >= 1000 && c.tx_frames >= 300);
        assert!(c.tx_capacity() >= 1518);
        let j = RingConfig::for_frames(9018, 64, 0);
        assert_eq!(j.frame_size, 16384);
        assert_eq!(j.tx_frames, 0);
        let r = j.request(j.rx_frames);
        assert_eq!(
            r.tp_block_nr * r.tp_block_size,
            r.tp_frame_nr * r.tp_frame_size
        );
        assert_eq!(SLL_OFFSET, 32);
        assert_eq!(TX_DATA_OFFSET, 32);
    }
}
