//! The body of a macro use: parameters replaced by their arguments, `#param` turned into a
//! string literal of the argument as written, and `a ## b` pasted into one token (the operands
//! of `#` and `##` take the argument unexpanded, as C's preprocessor does). The result is then
//! rescanned for more macros by the caller. GNU's `, ## __VA_ARGS__` drops the comma when the
//! variadic argument is empty.

/// A lexical piece of a macro body.
#[derive(Debug, Clone, PartialEq)]
enum Piece<'a> {
    Word(&'a str),
    Space,
    Hash,
    HashHash,
    Other(&'a str),
}

fn pieces(body: &str) -> Vec<Piece<'_>> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let c = b[i];
        if c == b'#' {
            if b.get(i + 1) == Some(&b'#') {
                out.push(Piece::HashHash);
                i += 2;
            } else {
                out.push(Piece::Hash);
                i += 1;
            }
            continue;
        }
        if c.is_ascii_whitespace() {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            out.push(Piece::Space);
            continue;
        }
        if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
            out.push(Piece::Other(&body[start..i]));
            continue;
        }
        if c.is_ascii_alphanumeric() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Piece::Word(&body[start..i]));
            continue;
        }
        let len = body[i..].chars().next().map(char::len_utf8).unwrap_or(1);
        i += len;
        out.push(Piece::Other(&body[start..i]));
    }
    out
}

/// `arg` as a string literal: inner whitespace runs become one space, `"` and `\` escaped.
fn stringize(arg: &str) -> String {
    let mut s = String::from("\"");
    for (k, w) in arg.split_whitespace().enumerate() {
        if k > 0 {
            s.push(' ');
        }
        for ch in w.chars() {
            if ch == '"' || ch == '\\' {
                s.push('\\');
            }
            s.push(ch);
        }
    }
    s.push('"');
    s
}

/// Checks a function-like macro body: every `#` must be followed by a parameter.
pub fn check_body(body: &str, params: Option<&[String]>) -> Result<(), String> {
    let p = pieces(body);
    let non_space: Vec<&Piece> = p.iter().filter(|x| **x != Piece::Space).collect();
    if matches!(non_space.first(), Some(Piece::HashHash))
        || matches!(non_space.last(), Some(Piece::HashHash))
    {
        return Err("`##` cannot be at either end of a macro body".into());
    }
    let Some(params) = params else {
        return Ok(());
    };
    for (k, x) in non_space.iter().enumerate() {
        if **x == Piece::Hash {
            match non_space.get(k + 1) {
                Some(Piece::Word(w)) if params.iter().any(|p| p == w) => {}
                _ => return Err("`#` is not followed by a macro parameter".into()),
            }
        }
    }
    Ok(())
}

/// A function-like macro's parameter names; with `variadic`, the last takes the rest.
#[derive(Clone, Copy)]
pub struct Params<'a> {
    pub names: &'a [String],
    pub variadic: bool,
}

/// The body with parameters replaced (`raw`: arguments as written, for `#` and `##`;
/// `expanded`: macro-expanded, everywhere else), stringized and pasted. `params` is `None`
/// for an object-like macro (then `#` is an ordinary character and only `##` pastes).
pub fn substitute(
    body: &str,
    params: Option<Params>,
    raw: &[String],
    expanded: &[String],
) -> String {
    let p = pieces(body);
    let param = |w: &str| params.and_then(|ps| ps.names.iter().position(|x| x == w));
    // The variadic parameter's index, when its argument is empty (`, ## __VA_ARGS__`).
    let empty_rest = params.and_then(|ps| {
        let last = ps.names.len().checked_sub(1)?;
        (ps.variadic && raw.get(last).is_some_and(|a| a.trim().is_empty())).then_some(last)
    });
    let next_non_space = |k: usize| (k + 1..p.len()).find(|&j| p[j] != Piece::Space);
    let mut out: Vec<String> = Vec::new();
    let mut k = 0;
    while k < p.len() {
        match &p[k] {
            Piece::Space => out.push(" ".into()),
            Piece::Hash if params.is_some() => {
                if let Some(j) = next_non_space(k) {
                    if let Piece::Word(w) = p[j] {
                        if let Some(i) = param(w) {
                            out.push(stringize(raw.get(i).map_or("", String::as_str)));
                            k = j + 1;
                            continue;
                        }
                    }
                }
                out.push("#".into());
            }
            Piece::Hash => out.push("#".into()),
            Piece::HashHash => {
                while out.last().is_some_and(|s| s == " ") {
                    out.pop();
                }
                let left = out.pop().unwrap_or_default();
                let Some(j) = next_non_space(k) else {
                    out.push(left);
                    break;
                };
                if left == ","
                    && matches!(p[j], Piece::Word(w) if param(w).is_some() && param(w) == empty_rest)
                {
                    k = j + 1;
                    continue;
                }
                let right = match p[j] {
                    Piece::Word(w) => match param(w) {
                        Some(i) => raw.get(i).cloned().unwrap_or_default(),
                        None => w.to_string(),
                    },
                    Piece::Other(o) => o.to_string(),
                    Piece::Hash => "#".into(),
                    Piece::HashHash => "##".into(),
                    Piece::Space => String::new(),
                };
                out.push(left + &right);
                k = j + 1;
                continue;
            }
            Piece::Word(w) => match param(w) {
                Some(i) => {
                    // An operand of `##` takes the argument as written.
                    let pasted = next_non_space(k).is_some_and(|j| p[j] == Piece::HashHash);
                    let src = if pasted { raw } else { expanded };
                    out.push(src.get(i).cloned().unwrap_or_default());
                }
                None => out.push(w.to_string()),
            },
            Piece::Other(o) => out.push(o.to_string()),
        }
        k += 1;
    }
    out.concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn fixed(names: &[String]) -> Option<Params<'_>> {
        Some(Params {
            names,
            variadic: false,
        })
    }

    #[test]
    fn gnu_comma_before_empty_variadic_argument_is_dropped() {
        let ps = s(&["f", "__VA_ARGS__"]);
        let params = Some(Params {
            names: &ps,
            variadic: true,
        });
        let body = "f(0 , ## __VA_ARGS__)";
        assert_eq!(
            substitute(body, params, &s(&["g", ""]), &s(&["g", ""])),
            "g(0 )"
        );
        assert_eq!(
            substitute(body, params, &s(&["g", "1, 2"]), &s(&["g", "1, 2"])),
            "g(0 ,1, 2)"
        );
    }

    #[test]
    fn paste_and_stringize() {
        let ps = s(&["a", "b"]);
        assert_eq!(
            substitute("a ## b", fixed(&ps), &s(&["tt", "l"]), &s(&["X", "Y"])),
            "ttl"
        );
        assert_eq!(
            substitute(
                "#a + b",
                fixed(&ps),
                &s(&["x  \"q\" y", "2"]),
                &s(&["E", "F"])
            ),
            "\"x \\\"q\\\" y\" + F"
        );
        assert_eq!(
            substitute("hdr.a##_h", fixed(&ps), &s(&["ipv4", ""]), &s(&["E", ""])),
            "hdr.ipv4_h"
        );
        // Object-like: `#` is just a character, `##` still pastes.
        assert_eq!(substitute("x ## 1 # y", None, &[], &[]), "x1 # y");
    }

    #[test]
    fn bodies_are_checked() {
        let ps = s(&["a"]);
        assert!(check_body("#a", Some(&ps)).is_ok());
        assert!(check_body("#b", Some(&ps)).is_err());
        assert!(check_body("## a", Some(&ps)).is_err());
        assert!(check_body("a ##", None).is_err());
        assert!(check_body("\"#\" a", Some(&ps)).is_ok());
    }
}
