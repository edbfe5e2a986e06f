//! P4Info aliases as p4c's P4Runtime serializer gives them: each entity's alias is the
//! shortest suffix of its dotted name (whole components) that no other entity's name ends
//! with, over every entity of the P4Info (p4c keeps one suffix set for all symbol types). Two
//! instances of one control (`src_acl.acl`, `dst_acl.acl`) so get `src_acl.acl` and
//! `dst_acl.acl`, not `acl` twice.

use std::collections::HashMap;

use super::proto::p4::config::v1 as pi;

/// Sets the alias of every preamble in `info`.
pub fn assign(info: &mut pi::P4Info) {
    let mut preambles: Vec<&mut pi::Preamble> = Vec::new();
    macro_rules! collect {
        ($($field:ident),*) => {
            $(preambles.extend(info.$field.iter_mut().filter_map(|x| x.preamble.as_mut()));)*
        };
    }
    collect!(
        tables,
        actions,
        action_profiles,
        counters,
        direct_counters,
        meters,
        direct_meters,
        controller_packet_metadata,
        value_sets,
        registers,
        digests
    );
    let names: Vec<String> = preambles.iter().map(|p| p.name.clone()).collect();
    for (p, alias) in preambles.into_iter().zip(shortest_unique_suffixes(&names)) {
        p.alias = alias;
    }
}

/// For each name, its shortest dot-separated suffix that is a suffix of no other name (the
/// whole name when every shorter one is shared, or the name appears twice).
pub fn shortest_unique_suffixes(names: &[String]) -> Vec<String> {
    // How many names end with each whole-component suffix.
    let mut count: HashMap<&str, usize> = HashMap::new();
    for n in names {
        for s in suffixes(n) {
            *count.entry(s).or_default() += 1;
        }
    }
    names
        .iter()
        .map(|n| {
            suffixes(n)
                .find(|s| count.get(s) == Some(&1))
                .unwrap_or(n)
                .to_string()
        })
        .collect()
}

/// `a.b.c` → `c`, `b.c`, `a.b.c`.
fn suffixes(name: &str) -> impl Iterator<Item = &str> {
    let cuts = name.rmatch_indices('.').map(|(i, _)| &name[i + 1..]);
    cuts.chain(std::iter::once(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn aliases_are_the_shortest_unique_suffixes() {
        let names = v(&[
            "Ingress.src_acl.acl",
            "Ingress.dst_acl.acl",
            "Ingress.src_acl.deny",
            "Ingress.dst_acl.deny",
            "Ingress.fwd",
            "pipe0.Ingress.x",
            "pipe1.Ingress.x",
            "acl",
        ]);
        assert_eq!(
            shortest_unique_suffixes(&names),
            v(&[
                "src_acl.acl",
                "dst_acl.acl",
                "src_acl.deny",
                "dst_acl.deny",
                "fwd",
                "pipe0.Ingress.x",
                "pipe1.Ingress.x",
                "acl",
            ])
        );
    }
}
