//! An STF script's statements as text: bytes decoded, comments cut, `\` continuations joined,
//! several statements on one line split at `;` (the harness's separator), each with its line.

use std::borrow::Cow;

/// A script file's bytes as text. A byte that is not UTF-8 (a Latin-1 `é` in a comment) becomes
/// U+FFFD instead of refusing the whole file: the harness reads bytes, and such a byte only
/// matters where a statement needs it, which then names its line.
pub fn decode(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// `raw` up to a `#` that is not inside double quotes.
fn cut_comment(raw: &str) -> &str {
    let mut quoted = false;
    for (i, c) in raw.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted => return &raw[..i],
            _ => {}
        }
    }
    raw
}

/// The statements of one logical line, split at `;` outside quotes. Each keeps its columns:
/// the text before it is blanked, so errors point into the line as written.
pub(super) fn split_statements(line: usize, text: &str, out: &mut Vec<(usize, String)>) {
    let mut quoted = false;
    let mut start = 0;
    let mut push = |from: usize, to: usize| {
        let blank: String = text[..from].chars().map(|_| ' ').collect();
        out.push((line, format!("{blank}{}", text[from..to].trim_end())));
    };
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ';' if !quoted => {
                push(start, i);
                start = i + 1;
            }
            _ => {}
        }
    }
    push(start, text.len());
}

/// The script's lines: comments cut, a `\\` at the end of a line joining the next one
/// (numbered as the first). Each is then expanded (`expand.rs`) and split at `;`
/// ([`split_statements`]).
pub(super) fn joined_lines(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    // A lone CR ends a line too (old Mac files), as in the P4 frontend: otherwise a whole
    // script starting with a comment would be one comment line, and pass checking nothing.
    let text = p4::source::normalize_lone_cr(text.to_string());
    for (i, raw) in text.lines().enumerate() {
        let body = cut_comment(raw);
        let (acc_line, mut acc) = pending.take().unwrap_or((i + 1, String::new()));
        if let Some(head) = body.trim_end().strip_suffix('\\') {
            acc.push_str(head);
            acc.push(' ');
            pending = Some((acc_line, acc));
            continue;
        }
        acc.push_str(body);
        out.push((acc_line, acc));
    }
    out.extend(pending);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logical_lines(text: &str) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for (line, t) in joined_lines(text) {
            split_statements(line, &t, &mut out);
        }
        out
    }

    #[test]
    fn semicolons_split_statements_and_keep_columns() {
        let v = logical_lines("packet 0 00; expect 1 00;\nwait # a; comment\n");
        let texts: Vec<&str> = v.iter().map(|(_, t)| t.trim()).collect();
        assert_eq!(texts, ["packet 0 00", "expect 1 00", "", "wait"]);
        assert_eq!(v[1].0, 1);
        assert_eq!(v[1].1.find('e'), Some(13));
        assert_eq!(v[3].0, 2);
    }

    #[test]
    fn quotes_hide_separators_and_comment_marks() {
        let v = logical_lines("add \"a;b#c\" k:1 x");
        assert_eq!(v.len(), 1);
        assert!(v[0].1.ends_with("k:1 x"));
    }

    #[test]
    fn non_utf8_bytes_are_read_lossily() {
        assert_eq!(decode(b"# caf\xe9\nwait\n"), "# caf\u{fffd}\nwait\n");
    }
}
