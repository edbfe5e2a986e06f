//! Protection domains and memory regions. The endpoint owns the memory of every MR (a
//! `Vec<u8>` per region, read and written through the API), gives it a virtual base
//! address, an lkey and an rkey, and checks keys, access flags and bounds for every
//! local scatter/gather entry and every remote access.

use std::collections::BTreeMap;
use std::ops::BitOr;

use super::VerbsError;

/// A protection domain handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PdHandle(pub u32);

/// Memory access rights of an MR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AccessFlags(u32);

impl AccessFlags {
    /// No remote access, local read only.
    pub const NONE: AccessFlags = AccessFlags(0);
    /// The local HCA may write (receive buffers, READ/atomic results).
    pub const LOCAL_WRITE: AccessFlags = AccessFlags(1);
    /// Remote RDMA WRITE.
    pub const REMOTE_WRITE: AccessFlags = AccessFlags(2);
    /// Remote RDMA READ.
    pub const REMOTE_READ: AccessFlags = AccessFlags(4);
    /// Remote atomics.
    pub const REMOTE_ATOMIC: AccessFlags = AccessFlags(8);
    /// Everything.
    pub const ALL: AccessFlags = AccessFlags(15);

    /// Whether all flags of `other` are set.
    pub fn contains(self, other: AccessFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for AccessFlags {
    type Output = AccessFlags;
    fn bitor(self, o: AccessFlags) -> AccessFlags {
        AccessFlags(self.0 | o.0)
    }
}

/// What `reg_mr` returns: the keys and the address range peers use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MrInfo {
    /// Local key (for scatter/gather entries).
    pub lkey: u32,
    /// Remote key (for RETH / AtomicETH).
    pub rkey: u32,
    /// Virtual address of the first byte.
    pub addr: u64,
    /// Length in bytes.
    pub len: usize,
    /// Owning protection domain.
    pub pd: PdHandle,
}

/// A scatter/gather entry: `length` bytes at `addr` in the MR of `lkey`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sge {
    /// Virtual address.
    pub addr: u64,
    /// Length.
    pub length: u32,
    /// Local key.
    pub lkey: u32,
}

struct Mr {
    info: MrInfo,
    access: AccessFlags,
    data: Vec<u8>,
}

/// Why a remote access was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RemoteAccessError {
    /// Unknown rkey, other PD, missing right or out of bounds.
    Violation,
}

/// All MRs of an endpoint.
#[derive(Default)]
pub(crate) struct MrTable {
    mrs: BTreeMap<u32, Mr>,
    rkeys: BTreeMap<u32, u32>,
    next_index: u32,
    next_addr: u64,
    pds: u32,
}

const BASE_ADDR: u64 = 0x7f00_0000_0000;
/// Largest MR we register (memory is allocated up front).
pub const MAX_MR_LEN: usize = 1 << 34;

impl MrTable {
    pub(crate) fn alloc_pd(&mut self) -> PdHandle {
        self.pds += 1;
        PdHandle(self.pds)
    }

    pub(crate) fn pd_exists(&self, pd: PdHandle) -> bool {
        pd.0 >= 1 && pd.0 <= self.pds
    }

    pub(crate) fn register(
        &mut self,
        pd: PdHandle,
        len: usize,
        access: AccessFlags,
    ) -> Result<MrInfo, VerbsError> {
        if !self.pd_exists(pd) {
            return Err(VerbsError::UnknownPd(pd.0));
        }
        if len > MAX_MR_LEN {
            return Err(VerbsError::TooLong {
                len,
                max: MAX_MR_LEN,
            });
        }
        // Remote write/atomic need local write, as in ibv_reg_mr.
        if (access.contains(AccessFlags::REMOTE_WRITE)
            || access.contains(AccessFlags::REMOTE_ATOMIC))
            && !access.contains(AccessFlags::LOCAL_WRITE)
        {
            return Err(VerbsError::InvalidAttr(
                "access: REMOTE_WRITE/ATOMIC need LOCAL_WRITE",
            ));
        }
        self.next_index = self.next_index.wrapping_add(1);
        let idx = self.next_index & 0x00FF_FFFF;
        if self.next_addr == 0 {
            self.next_addr = BASE_ADDR;
        }
        let addr = self.next_addr;
        let span = (len as u64).div_ceil(4096) * 4096 + 4096;
        self.next_addr = self.next_addr.saturating_add(span);
        let lkey = (idx << 8) | 0x11;
        let rkey = (idx << 8) | 0x22;
        let info = MrInfo {
            lkey,
            rkey,
            addr,
            len,
            pd,
        };
        self.mrs.insert(
            lkey,
            Mr {
                info,
                access,
                data: vec![0u8; len],
            },
        );
        self.rkeys.insert(rkey, lkey);
        Ok(info)
    }

    pub(crate) fn deregister(&mut self, lkey: u32) -> Result<(), VerbsError> {
        let mr = self.mrs.remove(&lkey).ok_or(VerbsError::UnknownMr(lkey))?;
        self.rkeys.remove(&mr.info.rkey);
        Ok(())
    }

    /// Invalidates an rkey (SEND_WITH_INVALIDATE): the MR stays locally usable.
    pub(crate) fn invalidate_rkey(&mut self, rkey: u32) -> bool {
        self.rkeys.remove(&rkey).is_some()
    }

    pub(crate) fn bytes(&self, lkey: u32) -> Result<&[u8], VerbsError> {
        self.mrs
            .get(&lkey)
            .map(|m| &m.data[..])
            .ok_or(VerbsError::UnknownMr(lkey))
    }

    pub(crate) fn bytes_mut(&mut self, lkey: u32) -> Result<&mut [u8], VerbsError> {
        self.mrs
            .get_mut(&lkey)
            .map(|m| &mut m.data[..])
            .ok_or(VerbsError::UnknownMr(lkey))
    }

    fn local_range(
        &self,
        pd: PdHandle,
        sge: &Sge,
        write: bool,
    ) -> Result<(u32, usize, usize), VerbsError> {
        let mr = self
            .mrs
            .get(&sge.lkey)
            .ok_or(VerbsError::LocalProtection("unknown lkey"))?;
        if mr.info.pd != pd {
            return Err(VerbsError::LocalProtection("lkey of another PD"));
        }
        if write && !mr.access.contains(AccessFlags::LOCAL_WRITE) {
            return Err(VerbsError::LocalProtection("MR lacks LOCAL_WRITE"));
        }
        let off = sge
            .addr
            .checked_sub(mr.info.addr)
            .ok_or(VerbsError::LocalProtection("address below MR"))?;
        let end = off
            .checked_add(u64::from(sge.length))
            .ok_or(VerbsError::LocalProtection("address overflow"))?;
        if end > mr.info.len as u64 {
            return Err(VerbsError::LocalProtection("beyond end of MR"));
        }
        Ok((sge.lkey, off as usize, end as usize))
    }

    /// Validates local SGEs (for posting).
    pub(crate) fn check_sges(
        &self,
        pd: PdHandle,
        sges: &[Sge],
        write: bool,
    ) -> Result<(), VerbsError> {
        for s in sges {
            self.local_range(pd, s, write)?;
        }
        Ok(())
    }

    /// Gathers SGEs into one buffer.
    pub(crate) fn gather(&self, pd: PdHandle, sges: &[Sge]) -> Result<Vec<u8>, VerbsError> {
        let mut out = Vec::new();
        for s in sges {
            let (lkey, a, b) = self.local_range(pd, s, false)?;
            out.extend_from_slice(&self.bytes(lkey)?[a..b]);
        }
        Ok(out)
    }

    /// Scatters `data` into SGEs starting `offset` bytes into the SGE list. Returns false
    /// if the data does not fit or an SGE became invalid.
    pub(crate) fn scatter(
        &mut self,
        pd: PdHandle,
        sges: &[Sge],
        mut offset: usize,
        mut data: &[u8],
    ) -> bool {
        for s in sges {
            if data.is_empty() {
                return true;
            }
            let Ok((lkey, a, b)) = self.local_range(pd, s, true) else {
                return false;
            };
            let len = b - a;
            if offset >= len {
                offset -= len;
                continue;
            }
            let n = (len - offset).min(data.len());
            let Ok(buf) = self.bytes_mut(lkey) else {
                return false;
            };
            buf[a + offset..a + offset + n].copy_from_slice(&data[..n]);
            data = &data[n..];
            offset = 0;
        }
        data.is_empty()
    }

    /// Resolves a remote access: returns (lkey, offset) of `len` bytes at `va`.
    pub(crate) fn remote(
        &self,
        pd: PdHandle,
        rkey: u32,
        va: u64,
        len: u64,
        need: AccessFlags,
    ) -> Result<(u32, usize), RemoteAccessError> {
        let lkey = *self.rkeys.get(&rkey).ok_or(RemoteAccessError::Violation)?;
        let mr = self.mrs.get(&lkey).ok_or(RemoteAccessError::Violation)?;
        if mr.info.pd != pd || !mr.access.contains(need) {
            return Err(RemoteAccessError::Violation);
        }
        let off = va
            .checked_sub(mr.info.addr)
            .ok_or(RemoteAccessError::Violation)?;
        let end = off.checked_add(len).ok_or(RemoteAccessError::Violation)?;
        if end > mr.info.len as u64 {
            return Err(RemoteAccessError::Violation);
        }
        Ok((lkey, off as usize))
    }
}

/// Total length of an SGE list.
pub(crate) fn sge_len(sges: &[Sge]) -> u64 {
    sges.iter().map(|s| u64::from(s.length)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_keys_and_rights_are_checked() {
        let mut t = MrTable::default();
        let pd = t.alloc_pd();
        let pd2 = t.alloc_pd();
        let rw = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
        let mr = t.register(pd, 100, rw).unwrap();
        assert!(t
            .remote(pd, mr.rkey, mr.addr, 100, AccessFlags::REMOTE_WRITE)
            .is_ok());
        assert!(t
            .remote(pd, mr.rkey, mr.addr + 1, 100, AccessFlags::REMOTE_WRITE)
            .is_err());
        assert!(t
            .remote(pd, mr.rkey, mr.addr - 1, 1, AccessFlags::REMOTE_WRITE)
            .is_err());
        assert!(t
            .remote(pd, mr.rkey, mr.addr, 1, AccessFlags::REMOTE_READ)
            .is_err());
        assert!(t
            .remote(pd2, mr.rkey, mr.addr, 1, AccessFlags::REMOTE_WRITE)
            .is_err());
        assert!(t
            .remote(pd, mr.lkey, mr.addr, 1, AccessFlags::REMOTE_WRITE)
            .is_err());
        assert!(t.register(pd, 1, AccessFlags::REMOTE_WRITE).is_err());
        assert!(t
            .remote(pd, mr.rkey, u64::MAX, 2, AccessFlags::REMOTE_WRITE)
            .is_err());
    }

    #[test]
    fn scatter_spans_sges_and_refuses_overflow() {
        let mut t = MrTable::default();
        let pd = t.alloc_pd();
        let mr = t.register(pd, 8, AccessFlags::LOCAL_WRITE).unwrap();
        let sges = [
            Sge {
                addr: mr.addr,
                length: 3,
                lkey: mr.lkey,
            },
            Sge {
                addr: mr.addr + 5,
                length: 3,
                lkey: mr.lkey,
            },
        ];
        assert!(t.scatter(pd, &sges, 1, b"abcd"));
        assert_eq!(t.bytes(mr.lkey).unwrap(), b"\0ab\0\0cd\0");
        assert!(!t.scatter(pd, &sges, 0, b"0123456"));
        // The failed scatter wrote what fitted; the gather reads both SGEs back in order.
        assert_eq!(t.gather(pd, &sges).unwrap(), b"012345".to_vec());
    }
}
