//! P4Info ids as P4Runtime defines them: the top 8 bits name the kind of object (the spec's
//! `P4Ids.Prefix`), the low 24 bits are a hash of the object's fully qualified name (Jenkins'
//! one-at-a-time hash, as the reference compiler uses). A collision moves the later name
//! (in sorted order, so the outcome does not depend on declaration order) to the next free id.
//! An `@id(N)` annotation fixes an object's id: N itself when it has a top byte, else N under
//! the kind's prefix.

use std::collections::{BTreeMap, BTreeSet};

/// `P4Ids.Prefix` values.
pub mod prefix {
    pub const ACTION: u8 = 0x01;
    pub const TABLE: u8 = 0x02;
    pub const VALUE_SET: u8 = 0x03;
    pub const CONTROLLER_HEADER: u8 = 0x04;
    pub const ACTION_PROFILE: u8 = 0x11;
    pub const COUNTER: u8 = 0x12;
    pub const DIRECT_COUNTER: u8 = 0x13;
    pub const METER: u8 = 0x14;
    pub const DIRECT_METER: u8 = 0x15;
    pub const REGISTER: u8 = 0x16;
    pub const DIGEST: u8 = 0x17;
}

/// Jenkins' one-at-a-time hash of `name`.
pub fn name_hash(name: &str) -> u32 {
    let mut h: u32 = 0;
    for &b in name.as_bytes() {
        h = h.wrapping_add(u32::from(b));
        h = h.wrapping_add(h << 10);
        h ^= h >> 6;
    }
    h = h.wrapping_add(h << 3);
    h ^= h >> 11;
    h.wrapping_add(h << 15)
}

/// Hands out ids, unique over every prefix.
#[derive(Debug, Default)]
pub struct IdAllocator {
    used: BTreeSet<u32>,
    /// `@id` values by object name.
    fixed: BTreeMap<String, u32>,
}

impl IdAllocator {
    /// An allocator that honours `@id` values (by fully qualified object name).
    pub fn with_fixed(fixed: BTreeMap<String, u32>) -> IdAllocator {
        IdAllocator {
            used: BTreeSet::new(),
            fixed,
        }
    }

    /// The `@id` of `name` (also when `name` carries a pipeline prefix the annotation's
    /// qualified name lacks).
    fn fixed_of(&self, name: &str) -> Option<u32> {
        self.fixed.get(name).copied().or_else(|| {
            let (_, rest) = name.split_once('.')?;
            self.fixed.get(rest).copied()
        })
    }

    /// Ids for `names` (one kind of object), in the order given: names are hashed in sorted
    /// order so that collisions resolve the same way whatever the program's declaration order.
    pub fn assign(&mut self, prefix: u8, names: &[String]) -> Vec<u32> {
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by(|a, b| names[*a].cmp(&names[*b]));
        let mut ids = vec![0; names.len()];
        // Annotated ids first, so hashed ones step around them.
        for &i in &order {
            if let Some(v) = self.fixed_of(&names[i]) {
                let id = if v >> 24 == 0 {
                    u32::from(prefix) << 24 | v
                } else {
                    v
                };
                if v & 0x00ff_ffff != 0 && self.used.insert(id) {
                    ids[i] = id;
                }
            }
        }
        for i in order {
            if ids[i] != 0 {
                continue;
            }
            let mut low = name_hash(&names[i]) & 0x00ff_ffff;
            loop {
                // Low 0 would make the id look unset when the prefix is masked off.
                let id = (u32::from(prefix) << 24) | low;
                if low != 0 && self.used.insert(id) {
                    ids[i] = id;
                    break;
                }
                low = (low + 1) & 0x00ff_ffff;
            }
        }
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_matches_the_published_one_at_a_time_values() {
        // Known values of Jenkins' one-at-a-time hash.
        assert_eq!(name_hash("a"), 0xca2e_9442);
        assert_eq!(
            name_hash("The quick brown fox jumps over the lazy dog"),
            0x519e_91f5
        );
        assert_eq!(name_hash(""), 0);
    }

    #[test]
    fn ids_carry_the_prefix_and_collisions_resolve_by_name_order() {
        let mut a = IdAllocator::default();
        let names = vec!["t2".to_string(), "t1".to_string()];
        let ids = a.assign(prefix::TABLE, &names);
        assert!(ids.iter().all(|id| id >> 24 == 2));
        assert_ne!(ids[0], ids[1]);
        // The same name twice: the second (in sorted order) takes the next id.
        let mut b = IdAllocator::default();
        let dup = vec!["x".to_string(), "x".to_string()];
        let ids = b.assign(prefix::ACTION, &dup);
        assert_eq!(ids[1], ids[0] + 1);
        // Declaration order does not change the outcome.
        let mut c = IdAllocator::default();
        let rev = vec!["t1".to_string(), "t2".to_string()];
        let r = c.assign(prefix::TABLE, &rev);
        let mut d = IdAllocator::default();
        let f = d.assign(prefix::TABLE, &names);
        assert_eq!((r[0], r[1]), (f[1], f[0]));
    }

    #[test]
    fn annotated_ids_win_and_hashed_ones_step_around_them() {
        let hashed = IdAllocator::default().assign(prefix::TABLE, &["t".to_string()])[0];
        let mut a = IdAllocator::with_fixed(
            [
                ("C.u".to_string(), hashed & 0xff_ffff),
                ("C.v".to_string(), 0x0200_0007),
            ]
            .into(),
        );
        let ids = a.assign(
            prefix::TABLE,
            &["t".to_string(), "C.u".to_string(), "pipe.C.v".to_string()],
        );
        assert_eq!(ids[1], hashed, "C.u takes the id t would have hashed to");
        assert_eq!(ids[0], hashed + 1, "t steps to the next free id");
        assert_eq!(
            ids[2], 0x0200_0007,
            "a pipeline-qualified name finds its @id"
        );
    }
}
