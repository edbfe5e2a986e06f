//! Structure-aware inputs for the P4 fuzz targets (`p4_parse`, `p4_compile`): a complete TNA
//! program with one deep or long construct in it (nested `?:`, parentheses, unary operators,
//! blocks, `else if`; long operator, postfix and `#if` chains; long lines of junk), with depth
//! and length drawn from the input up to well past the frontend's limits (`p4/LIMITS.md`), so
//! the fuzzer reaches them without having to grow 100 KB of text byte by byte.

use arbitrary::{Result, Unstructured};

/// Largest depth or length generated: past every limit (`MAX_EXPR_DEPTH` is 2000).
const MAX_SIZE: usize = 120_000;

/// A TNA program whose ingress `apply` body is `BODY` (the limits tests' skeleton).
const PROGRAM: &str = include_str!("../../../p4/tests/limits_skeleton.p4");

const BIN_OPS: &[&str] = &[
    "+", "-", "*", "/", "%", "|+|", "|-|", "&", "|", "^", "<<", ">>", "++", "==", "!=", "<", ">",
    "<=", ">=", "&&", "||",
];
const LEAVES: &[&str] = &[
    "hdr.ipv4.ttl",
    "hdr.ipv4.p",
    "1",
    "8w3",
    "0",
    "true",
    "(bit<8>)1",
];
const PREFIX: &[&str] = &["!", "~", "-", "+", "(bit<8>)"];
const JUNK: &[&str] = &["$", "\0", "`", "\\", "\u{7f}", "é", "/*", "\"", "#", "\r"];

fn pick<'a>(u: &mut Unstructured<'_>, xs: &[&'a str]) -> Result<&'a str> {
    Ok(xs[u.choose_index(xs.len())?])
}

/// A size: mostly small, sometimes around the limits, sometimes huge.
fn size(u: &mut Unstructured<'_>) -> Result<usize> {
    Ok(match u.int_in_range(0u8..=3)? {
        0 => u.int_in_range(0..=64)?,
        1 => u.int_in_range(400..=600)?,
        2 => u.int_in_range(1_900..=2_100)?,
        _ => u.int_in_range(0..=MAX_SIZE)?,
    })
}

/// One construct, as text for the ingress `apply` block (or the whole file for `#if`).
fn construct(u: &mut Unstructured<'_>) -> Result<(String, bool)> {
    let n = size(u)?;
    let leaf = pick(u, LEAVES)?;
    Ok(match u.int_in_range(0u8..=10)? {
        // `a op b op c ...` (one operator or a mix).
        0 => {
            let mixed = u.arbitrary::<bool>()?;
            let op = pick(u, BIN_OPS)?;
            let mut s = format!("hdr.ipv4.ttl = {leaf}");
            for _ in 0..n {
                let op = if mixed {
                    pick(u, BIN_OPS).unwrap_or(op)
                } else {
                    op
                };
                s.push_str(&format!(" {op} {leaf}"));
            }
            (s + ";", false)
        }
        // `if (c || c || ...)`
        1 => {
            let op = if u.arbitrary::<bool>()? { "||" } else { "&&" };
            let c = vec!["hdr.ipv4.ttl == 1"; n.max(1)].join(&format!(" {op} "));
            (format!("if ({c}) {{ hdr.ipv4.p = 1; }}"), false)
        }
        // Nested `?:` (right-nested) or `(c ? a : b) ? ...` (left-nested).
        2 => {
            if u.arbitrary::<bool>()? {
                (
                    format!(
                        "hdr.ipv4.ttl = {}8w2;",
                        "hdr.ipv4.p == 1 ? 8w1 : ".repeat(n)
                    ),
                    false,
                )
            } else {
                let open = "(".repeat(n);
                let close = " ? true : false)".repeat(n);
                (
                    format!("if ({open}hdr.ipv4.p == 1{close}) {{ hdr.ipv4.p = 1; }}"),
                    false,
                )
            }
        }
        // Parentheses.
        3 => (
            format!("hdr.ipv4.ttl = {}{leaf}{};", "(".repeat(n), ")".repeat(n)),
            false,
        ),
        // Prefix operators and casts.
        4 => {
            let p = pick(u, PREFIX)?;
            (format!("hdr.ipv4.ttl = {}{leaf};", p.repeat(n)), false)
        }
        // Blocks, `if` nests and `else if` chains.
        5 => match u.int_in_range(0u8..=2)? {
            0 => (
                format!("{}hdr.ipv4.p = 1;{}", "{ ".repeat(n), " }".repeat(n)),
                false,
            ),
            1 => (
                format!(
                    "{}hdr.ipv4.p = 1;{}",
                    "if (hdr.ipv4.ttl == 1) { ".repeat(n),
                    " }".repeat(n)
                ),
                false,
            ),
            _ => (
                format!(
                    "if (hdr.ipv4.ttl == 0) {{ hdr.ipv4.p = 0; }}{} else {{ hdr.ipv4.p = 9; }}",
                    " else if (hdr.ipv4.ttl == 1) { hdr.ipv4.p = 1; }".repeat(n)
                ),
                false,
            ),
        },
        // Postfix chains: members, indexes, slices, calls.
        6 => {
            let link = pick(u, &[".ttl", "[0]", "[7:0]", "()", ".isValid()", ".apply()"])?;
            (format!("hdr.ipv4.ttl = hdr.ipv4{};", link.repeat(n)), false)
        }
        // `#if` expressions: nested `?:`, parentheses, chains.
        7 => {
            let e = match u.int_in_range(0u8..=2)? {
                0 => format!("{}1", "0 ? 0 : ".repeat(n)),
                1 => format!("{}1{}", "(".repeat(n), ")".repeat(n)),
                _ => format!("1{}", " + 1".repeat(n)),
            };
            (format!("#if {e}\nconst bit<8> X = 1;\n#endif\n"), true)
        }
        // A long line of characters that are not P4, or of separated ones.
        8 => {
            let j = pick(u, JUNK)?;
            let sep = if u.arbitrary::<bool>()? { " " } else { "" };
            (format!("{j}{sep}").repeat(n), false)
        }
        // Long flat lists: arguments, list expressions, statements.
        9 => {
            let items = vec![leaf; n.max(1)].join(", ");
            let s = if u.arbitrary::<bool>()? {
                format!("hdr.ipv4.ttl = max({items});")
            } else {
                "hdr.ipv4.p = hdr.ipv4.p + 1; ".repeat(n)
            };
            (s, false)
        }
        // Macros expanding to deep expressions.
        _ => {
            let d = n.min(200);
            (
                format!(
                    "#define F(x) ((x) + (x))\nconst bit<8> Y = {}1{};\n",
                    "F(".repeat(d),
                    ")".repeat(d)
                ),
                true,
            )
        }
    })
}

/// A program with one deep or long construct; raw text is appended from the rest of the input.
pub fn program(u: &mut Unstructured<'_>) -> Result<String> {
    let (text, whole_file) = construct(u)?;
    let mut out = if whole_file {
        format!("{text}{}", PROGRAM.replace("BODY", ""))
    } else {
        PROGRAM.replace("BODY", &text)
    };
    let tail: &[u8] = u.arbitrary()?;
    out.push_str(&String::from_utf8_lossy(tail));
    Ok(out)
}
