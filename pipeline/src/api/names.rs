//! Name resolution for the runtime API: `SwitchIngress.forward`, `pipe.SwitchIngress.forward`
//! or a bare `forward` when only one object ends that way; an ambiguous name lists its
//! candidates, an unknown one the closest known names.

use super::ApiError;

/// One nameable object: its pipeline (index and instance name), its index there, and its name.
pub(crate) struct Candidate<'a> {
    pub pipeline: usize,
    pub pipeline_name: &'a str,
    pub index: usize,
    pub name: &'a str,
}

/// Does `name` designate `full` (a control-qualified name) in pipeline `pipe`?
/// Returns 2 for an exact match (qualified or not), 1 for a dotted-suffix match, 0 for none.
fn score(name: &str, pipe: &str, full: &str) -> u8 {
    if name == full {
        return 2;
    }
    if let Some(rest) = name.strip_prefix(pipe).and_then(|r| r.strip_prefix('.')) {
        if rest == full {
            return 2;
        }
    }
    if full.len() > name.len()
        && full.ends_with(name)
        && full.as_bytes()[full.len() - name.len() - 1] == b'.'
    {
        return 1;
    }
    0
}

/// Up to three known names closest to `name` (Jaro-Winkler on the last component and the
/// full name), best first.
pub(crate) fn suggest<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> Vec<String> {
    let last = name.rsplit('.').next().unwrap_or(name);
    let mut scored: Vec<(f64, String)> = known
        .map(|k| {
            let klast = k.rsplit('.').next().unwrap_or(k);
            let s = strsim::jaro_winkler(last, klast).max(strsim::jaro_winkler(name, k));
            (s, k.to_string())
        })
        .filter(|(s, _)| *s >= 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, k)| k).collect()
}

/// Resolve `name` among `cands`.
pub(crate) fn resolve<'a>(
    kind: &'static str,
    name: &str,
    cands: impl Iterator<Item = Candidate<'a>> + Clone,
    multi_pipeline: bool,
) -> Result<(usize, usize), ApiError> {
    let mut best = 0u8;
    let mut found: Vec<(usize, usize, String)> = Vec::new();
    for c in cands.clone() {
        let s = score(name, c.pipeline_name, c.name);
        if s == 0 || s < best {
            continue;
        }
        if s > best {
            best = s;
            found.clear();
        }
        let shown = if multi_pipeline {
            format!("{}.{}", c.pipeline_name, c.name)
        } else {
            c.name.to_string()
        };
        found.push((c.pipeline, c.index, shown));
    }
    match found.len() {
        1 => Ok((found[0].0, found[0].1)),
        0 => Err(ApiError::Unknown {
            kind,
            name: name.to_string(),
            suggestions: suggest(name, cands.map(|c| c.name)),
        }),
        _ => Err(ApiError::Ambiguous {
            kind,
            name: name.to_string(),
            candidates: found.into_iter().map(|f| f.2).collect(),
        }),
    }
}

/// Resolve an action name inside a set of allowed actions: exact or dotted-suffix match.
pub(crate) fn match_local(name: &str, full: &str) -> bool {
    score(name, "", full) > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cands() -> Vec<(usize, &'static str, usize, &'static str)> {
        vec![
            (0, "pipe", 0, "SwitchIngress.forward"),
            (0, "pipe", 1, "SwitchEgress.forward"),
            (0, "pipe", 2, "SwitchIngress.ipv4_lpm"),
        ]
    }

    fn run(name: &str) -> Result<(usize, usize), ApiError> {
        let c = cands();
        resolve(
            "table",
            name,
            c.iter().map(|(p, pn, i, n)| Candidate {
                pipeline: *p,
                pipeline_name: pn,
                index: *i,
                name: n,
            }),
            false,
        )
    }

    #[test]
    fn qualified_pipe_qualified_and_bare_names() {
        assert_eq!(run("SwitchIngress.forward").unwrap(), (0, 0));
        assert_eq!(run("pipe.SwitchEgress.forward").unwrap(), (0, 1));
        assert_eq!(run("ipv4_lpm").unwrap(), (0, 2));
    }

    #[test]
    fn ambiguous_bare_name_lists_candidates() {
        match run("forward") {
            Err(ApiError::Ambiguous { candidates, .. }) => {
                assert_eq!(
                    candidates,
                    vec!["SwitchIngress.forward", "SwitchEgress.forward"]
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unknown_name_suggests_close_ones() {
        match run("ipv4_lmp") {
            Err(ApiError::Unknown { suggestions, .. }) => {
                assert_eq!(
                    suggestions.first().map(String::as_str),
                    Some("SwitchIngress.ipv4_lpm")
                )
            }
            other => panic!("{other:?}"),
        }
        // A suffix that does not start at a dot is not a match.
        assert!(matches!(run("lpm"), Err(ApiError::Unknown { .. })));
    }
}
