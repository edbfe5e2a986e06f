//! Priorities on lpm tables. The harness puts lpm entries in a TCAM at the address their
//! priority names, so there the higher priority wins whatever the prefix lengths; pisa (as P4
//! and the drivers) matches the longest prefix. When a script's priorities rank two
//! overlapping entries against their prefix lengths, the `add` gets a note saying so.

use pipeline::api::TableEntry;
use pipeline::ir::{self, KeyMatch};

use super::{Added, Runner};

/// Whether two entries' keys can match one packet: exact fields equal, lpm prefixes nested.
/// `Some(longer)`: they overlap, and whether `a`'s prefix is the longer (`None`: disjoint or
/// not comparable).
fn nested(t: &ir::Table, a: &TableEntry, b: &TableEntry) -> Option<bool> {
    let mut a_longer = None;
    for ((name, ka), (_, kb)) in a.keys.iter().zip(&b.keys) {
        match (ka, kb) {
            (KeyMatch::Exact(x), KeyMatch::Exact(y)) if x == y => {}
            (
                KeyMatch::Lpm {
                    value: va,
                    prefix_len: la,
                },
                KeyMatch::Lpm {
                    value: vb,
                    prefix_len: lb,
                },
            ) if la != lb => {
                let w = t.keys.iter().find(|k| &k.name == name)?.expr.width();
                let short = u32::from(*la.min(lb));
                let shift = u32::from(w).saturating_sub(short);
                if (va ^ vb).checked_shr(shift).unwrap_or(0) != 0 {
                    return None;
                }
                a_longer = Some(la > lb);
            }
            _ => return None,
        }
    }
    a_longer
}

fn prefix_text(e: &TableEntry) -> String {
    e.keys
        .iter()
        .find_map(|(_, k)| match k {
            KeyMatch::Lpm { prefix_len, .. } => Some(format!("/{prefix_len}")),
            _ => None,
        })
        .unwrap_or_default()
}

impl Runner<'_> {
    /// Notes an lpm entry whose priority `stf` ranks it against the prefix order of an
    /// overlapping entry added before.
    pub(super) fn lpm_priority_note(
        &mut self,
        line: usize,
        t: &ir::Table,
        full: &str,
        entry: &TableEntry,
        stf: u32,
    ) {
        let clash = |a: &'_ Added| -> Option<(u32, usize, String)> {
            let other = a.stf_priority?;
            let longer = nested(t, entry, &a.entry)?;
            (a.table == full && other != stf && longer == (stf < other))
                .then(|| (other, a.line, prefix_text(&a.entry)))
        };
        let Some((other, other_line, theirs)) = self.added.iter().find_map(clash) else {
            return;
        };
        let mine = prefix_text(entry);
        let (win, win_p) = if stf > other {
            (&mine, stf)
        } else {
            (&theirs, other)
        };
        let msg = format!(
            "add {full}: priorities order this {mine} entry (priority {stf}) and the {theirs} \
             entry of line {other_line} (priority {other}) against their prefixes: the Tofino \
             harness, where an lpm priority is a TCAM address, would pick the {win} entry \
             (priority {win_p}) for packets both match; pisa matches the longest prefix"
        );
        self.note(line, msg);
    }
}
