//! "Did you mean" help: the closest known name to a misspelt one.

/// The candidate closest to `name` by edit distance, when it is close enough to be a likely
/// typo (distance at most a third of the name's length, and at least 1).
pub fn closest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let limit = (name.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == name || c.starts_with('$') {
            continue;
        }
        let d = strsim::damerau_levenshtein(name, c);
        if d <= limit && best.is_none_or(|(bd, bc)| d < bd || (d == bd && c < bc)) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// A `help:` line for an unknown name: "did you mean `x`?" or nothing.
pub fn did_you_mean<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<String> {
    closest(name, candidates).map(|c| format!("did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_typos_only() {
        let names = ["ethernet", "ipv4", "ipv6", "tcp"];
        assert_eq!(closest("etherent", names), Some("ethernet"));
        assert_eq!(closest("ipv5", names), Some("ipv4"));
        assert_eq!(closest("vlan", names), None);
        assert_eq!(closest("tcp", names), None);
    }
}
