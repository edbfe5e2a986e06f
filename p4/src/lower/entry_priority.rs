//! The priorities of a table's `entries`, as the P4_16 spec's "Entry priorities" section numbers
//! them, normalised to pisa's convention (the numerically smaller priority wins, as BfRt's
//! `$MATCH_PRIORITY`).
//!
//! - No entry has a priority: `None` for every entry; the table numbers them in program order,
//!   first wins (what the spec's numbering gives, whatever `priority_delta` is).
//! - Some do: the first must have one; an entry without one gets the previous entry's priority
//!   minus `priority_delta` (`largest_priority_wins = true`, the default) or plus it (`false`).
//! - `largest_priority_wins = true`: `p` becomes `LARGEST_WINS_TOP - p`, as a P4Runtime
//!   priority does ([`pipeline::table::priority_from_largest_wins`]), so 0..=2^31-1 is the range;
//!   `false`: `p` is kept (0..=2^32-1), as a table file's `$MATCH_PRIORITY` is.

use pipeline::table::priority_from_largest_wins;

/// The table properties that decide how entry priorities are read.
#[derive(Debug, Clone, Copy)]
pub struct Convention {
    /// `largest_priority_wins` (default true).
    pub largest_wins: bool,
    /// `priority_delta` (default 1).
    pub delta: i128,
}

impl Default for Convention {
    fn default() -> Self {
        Convention {
            largest_wins: true,
            delta: 1,
        }
    }
}

/// Why the priorities of a table's entries cannot be used: the entry (index) and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorityError {
    pub entry: usize,
    pub message: String,
}

/// The spec's priority of each entry, from the explicit ones (`None` where not written), in
/// pisa's convention.
pub fn normalise(
    explicit: &[Option<i128>],
    c: Convention,
) -> Result<Vec<Option<u32>>, PriorityError> {
    if explicit.iter().all(Option::is_none) {
        return Ok(vec![None; explicit.len()]);
    }
    let mut out = Vec::with_capacity(explicit.len());
    let mut p: i128 = 0;
    for (i, e) in explicit.iter().enumerate() {
        p = match (e, i) {
            (Some(v), _) => *v,
            (None, 0) => {
                return Err(PriorityError {
                    entry: 0,
                    message: "the first entry needs a priority when any entry of the table has \
                              one (P4_16 \"Entry priorities\")"
                        .into(),
                })
            }
            (None, _) if c.largest_wins => p - c.delta,
            (None, _) => p + c.delta,
        };
        out.push(Some(to_pisa(p, c.largest_wins).ok_or_else(|| {
            PriorityError {
                entry: i,
                message: format!(
                    "priority {p} out of range ({})",
                    if c.largest_wins {
                        "0 to 2147483647 with `largest_priority_wins`"
                    } else {
                        "0 to 4294967295"
                    }
                ),
            }
        })?));
    }
    Ok(out)
}

fn to_pisa(p: i128, largest_wins: bool) -> Option<u32> {
    let p = u32::try_from(p).ok()?;
    if largest_wins {
        priority_from_largest_wins(p)
    } else {
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_wins_by_default_and_gaps_follow_the_spec_example() {
        let v = normalise(&[Some(10), Some(20), Some(1)], Convention::default()).unwrap();
        let (a, b, c) = (v[0].unwrap(), v[1].unwrap(), v[2].unwrap());
        assert!(b < a && a < c, "20 beats 10 beats 1: {v:?}");
        // The spec's example: smallest wins, delta 10, 10 _ _ _ 40 _ -> 10 20 30 40 40 50.
        let c = Convention {
            largest_wins: false,
            delta: 10,
        };
        let v = normalise(&[Some(10), None, None, None, Some(40), None], c).unwrap();
        assert_eq!(v, [10, 20, 30, 40, 40, 50].map(Some).to_vec());
    }

    #[test]
    fn no_priorities_stay_program_order_and_bad_ones_are_refused() {
        assert_eq!(
            normalise(&[None, None], Convention::default()).unwrap(),
            vec![None, None]
        );
        assert_eq!(
            normalise(&[None, Some(3)], Convention::default())
                .unwrap_err()
                .entry,
            0
        );
        // 0 then 0 - 1 = -1 is negative.
        assert_eq!(
            normalise(&[Some(0), None], Convention::default())
                .unwrap_err()
                .entry,
            1
        );
        assert!(normalise(&[Some(1 << 31)], Convention::default()).is_err());
    }
}
