//! [`PortSpec`]: the port strings users type (`mem:NAME`, `pcap:in.pcap[,out=out.pcap]`,
//! `afpacket:IFNAME`, `afxdp:IFNAME[,zerocopy][,queue=N]`, `dpdk:PCI_OR_VDEV`), parsed into a
//! typed value with errors that name what is wrong. [`PortSpec`]'s `Display` writes the same
//! syntax back, so specs round-trip.
//!
//! Grammar: `KIND:ARG[,OPTION]...` where an option is `key=value` or a bare flag.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// A parsed port spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortSpec {
    /// `mem:NAME`: one end of a named in-memory link.
    Mem {
        /// Link name.
        name: String,
    },
    /// `pcap:IN[,out=OUT][,paced]` or `pcap:out=OUT`: replay a file on receive and/or write
    /// one on send.
    Pcap {
        /// File replayed on receive.
        input: Option<PathBuf>,
        /// File written on send.
        output: Option<PathBuf>,
        /// Replay with the file's inter-frame gaps instead of all at once.
        paced: bool,
    },
    /// `afpacket:IFNAME`: an AF_PACKET socket bound to a network interface.
    AfPacket {
        /// Interface name.
        ifname: String,
    },
    /// `afxdp:IFNAME[,zerocopy][,queue=N]`: an AF_XDP socket.
    AfXdp {
        /// Interface name.
        ifname: String,
        /// Ask for zero-copy mode (fails where the driver lacks it, e.g. veth).
        zerocopy: bool,
        /// The NIC receive queue to bind.
        queue: u32,
    },
    /// `dpdk:DEVICE`: a DPDK port (PCI address like `0000:3b:00.0` or a vdev like
    /// `net_af_packet0,iface=veth0`).
    Dpdk {
        /// PCI address or vdev string.
        device: String,
    },
}

/// What is wrong with a port spec.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PortSpecError {
    /// Nothing was given.
    #[error("empty port spec; expected KIND:ARG, e.g. afpacket:veth0")]
    Empty,
    /// No `:` separating kind and argument.
    #[error("port spec {0:?} has no ':'; expected KIND:ARG with KIND one of mem, pcap, afpacket, afxdp, dpdk")]
    MissingColon(String),
    /// The kind is not known.
    #[error("unknown port kind {0:?}; expected one of mem, pcap, afpacket, afxdp, dpdk")]
    UnknownKind(String),
    /// The kind needs an argument (name, file or interface) that is missing.
    #[error("{kind}: missing {what}")]
    MissingArgument {
        /// Port kind.
        kind: &'static str,
        /// What was expected.
        what: &'static str,
    },
    /// An interface name that Linux would reject.
    #[error("{kind}: bad interface name {name:?}: {reason}")]
    BadInterfaceName {
        /// Port kind.
        kind: &'static str,
        /// The name.
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// A name with characters that are not allowed.
    #[error("{kind}: bad name {name:?}: use letters, digits, '-', '_' or '.'")]
    BadName {
        /// Port kind.
        kind: &'static str,
        /// The name.
        name: String,
    },
    /// An option the kind does not take.
    #[error("{kind}: unknown option {option:?}; allowed: {allowed}")]
    UnknownOption {
        /// Port kind.
        kind: &'static str,
        /// The option as written.
        option: String,
        /// The allowed options.
        allowed: &'static str,
    },
    /// An option given twice.
    #[error("{kind}: option {option:?} given twice")]
    DuplicateOption {
        /// Port kind.
        kind: &'static str,
        /// The option.
        option: String,
    },
    /// An option value that does not parse.
    #[error("{kind}: bad value {value:?} for {option}: {reason}")]
    BadValue {
        /// Port kind.
        kind: &'static str,
        /// The option.
        option: &'static str,
        /// The value as written.
        value: String,
        /// Why.
        reason: &'static str,
    },
}

/// Checks a Linux interface name (IFNAMSIZ is 16 including the terminating NUL).
pub fn check_ifname(kind: &'static str, name: &str) -> Result<(), PortSpecError> {
    let bad = |reason| PortSpecError::BadInterfaceName {
        kind,
        name: name.to_string(),
        reason,
    };
    if name.is_empty() {
        return Err(bad("empty"));
    }
    if name.len() > 15 {
        return Err(bad("longer than 15 bytes"));
    }
    if name == "." || name == ".." {
        return Err(bad("not allowed"));
    }
    if name
        .bytes()
        .any(|b| b == b'/' || b == b':' || b == b',' || b == b'=' || b.is_ascii_whitespace())
        || !name.is_ascii()
    {
        return Err(bad("contains '/', ':', ',', '=', whitespace or non-ASCII"));
    }
    Ok(())
}

fn check_name(kind: &'static str, name: &str) -> Result<(), PortSpecError> {
    if name.is_empty() {
        return Err(PortSpecError::MissingArgument { kind, what: "name" });
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return Err(PortSpecError::BadName {
            kind,
            name: name.to_string(),
        });
    }
    Ok(())
}

fn no_options(kind: &'static str, opts: &[&str]) -> Result<(), PortSpecError> {
    match opts.first() {
        None => Ok(()),
        Some(o) => Err(PortSpecError::UnknownOption {
            kind,
            option: o.to_string(),
            allowed: "none",
        }),
    }
}

fn set_once<T>(
    slot: &mut Option<T>,
    v: T,
    kind: &'static str,
    option: &str,
) -> Result<(), PortSpecError> {
    if slot.is_some() {
        return Err(PortSpecError::DuplicateOption {
            kind,
            option: option.to_string(),
        });
    }
    *slot = Some(v);
    Ok(())
}

fn parse_pcap(arg: &str) -> Result<PortSpec, PortSpecError> {
    const KIND: &str = "pcap";
    let mut input = None;
    let mut output = None;
    let mut paced = None;
    if arg.is_empty() {
        return Err(PortSpecError::MissingArgument {
            kind: KIND,
            what: "an input file or out=FILE",
        });
    }
    for (i, part) in arg.split(',').enumerate() {
        if let Some((k, v)) = part.split_once('=') {
            let slot = match k {
                "in" => &mut input,
                "out" => &mut output,
                _ => {
                    return Err(PortSpecError::UnknownOption {
                        kind: KIND,
                        option: part.to_string(),
                        allowed: "in=FILE, out=FILE, paced",
                    })
                }
            };
            if v.is_empty() {
                return Err(PortSpecError::BadValue {
                    kind: KIND,
                    option: if k == "in" { "in" } else { "out" },
                    value: v.to_string(),
                    reason: "empty file name",
                });
            }
            set_once(slot, PathBuf::from(v), KIND, k)?;
        } else if part == "paced" {
            set_once(&mut paced, true, KIND, part)?;
        } else if i == 0 && !part.is_empty() {
            input = Some(PathBuf::from(part));
        } else {
            return Err(PortSpecError::UnknownOption {
                kind: KIND,
                option: part.to_string(),
                allowed: "in=FILE, out=FILE, paced",
            });
        }
    }
    if input.is_none() && output.is_none() {
        return Err(PortSpecError::MissingArgument {
            kind: KIND,
            what: "an input file or out=FILE",
        });
    }
    Ok(PortSpec::Pcap {
        input,
        output,
        paced: paced.unwrap_or(false),
    })
}

fn parse_afxdp(arg: &str) -> Result<PortSpec, PortSpecError> {
    const KIND: &str = "afxdp";
    let mut parts = arg.split(',');
    let ifname = parts.next().unwrap_or_default();
    if ifname.is_empty() {
        return Err(PortSpecError::MissingArgument {
            kind: KIND,
            what: "interface name",
        });
    }
    check_ifname(KIND, ifname)?;
    let mut zerocopy = None;
    let mut queue = None;
    for part in parts {
        match part.split_once('=') {
            None if part == "zerocopy" => set_once(&mut zerocopy, true, KIND, part)?,
            Some(("queue", v)) => {
                let q = v.parse::<u32>().map_err(|_| PortSpecError::BadValue {
                    kind: KIND,
                    option: "queue",
                    value: v.to_string(),
                    reason: "expected a queue number (0, 1, ...)",
                })?;
                set_once(&mut queue, q, KIND, "queue")?;
            }
            _ => {
                return Err(PortSpecError::UnknownOption {
                    kind: KIND,
                    option: part.to_string(),
                    allowed: "zerocopy, queue=N",
                })
            }
        }
    }
    Ok(PortSpec::AfXdp {
        ifname: ifname.to_string(),
        zerocopy: zerocopy.unwrap_or(false),
        queue: queue.unwrap_or(0),
    })
}

impl FromStr for PortSpec {
    type Err = PortSpecError;

    fn from_str(s: &str) -> Result<PortSpec, PortSpecError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(PortSpecError::Empty);
        }
        let (kind, arg) = s
            .split_once(':')
            .ok_or_else(|| PortSpecError::MissingColon(s.to_string()))?;
        match kind {
            "mem" => {
                let mut parts = arg.split(',');
                let name = parts.next().unwrap_or_default();
                check_name("mem", name)?;
                no_options("mem", &parts.collect::<Vec<_>>())?;
                Ok(PortSpec::Mem {
                    name: name.to_string(),
                })
            }
            "pcap" => parse_pcap(arg),
            "afpacket" => {
                let mut parts = arg.split(',');
                let ifname = parts.next().unwrap_or_default();
                if ifname.is_empty() {
                    return Err(PortSpecError::MissingArgument {
                        kind: "afpacket",
                        what: "interface name",
                    });
                }
                check_ifname("afpacket", ifname)?;
                no_options("afpacket", &parts.collect::<Vec<_>>())?;
                Ok(PortSpec::AfPacket {
                    ifname: ifname.to_string(),
                })
            }
            "afxdp" => parse_afxdp(arg),
            "dpdk" => {
                // DPDK vdev strings carry their own commas (net_af_packet0,iface=x), so the
                // whole argument is the device.
                if arg.is_empty() {
                    return Err(PortSpecError::MissingArgument {
                        kind: "dpdk",
                        what: "PCI address or vdev",
                    });
                }
                if arg
                    .bytes()
                    .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
                {
                    return Err(PortSpecError::BadValue {
                        kind: "dpdk",
                        option: "device",
                        value: arg.to_string(),
                        reason: "contains whitespace or control characters",
                    });
                }
                Ok(PortSpec::Dpdk {
                    device: arg.to_string(),
                })
            }
            other => Err(PortSpecError::UnknownKind(other.to_string())),
        }
    }
}

impl fmt::Display for PortSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortSpec::Mem { name } => write!(f, "mem:{name}"),
            PortSpec::Pcap {
                input,
                output,
                paced,
            } => {
                f.write_str("pcap:")?;
                let mut sep = "";
                if let Some(i) = input {
                    write!(f, "in={}", i.display())?;
                    sep = ",";
                }
                if let Some(o) = output {
                    write!(f, "{sep}out={}", o.display())?;
                    sep = ",";
                }
                if *paced {
                    write!(f, "{sep}paced")?;
                }
                Ok(())
            }
            PortSpec::AfPacket { ifname } => write!(f, "afpacket:{ifname}"),
            PortSpec::AfXdp {
                ifname,
                zerocopy,
                queue,
            } => {
                write!(f, "afxdp:{ifname}")?;
                if *zerocopy {
                    f.write_str(",zerocopy")?;
                }
                if *queue != 0 {
                    write!(f, ",queue={queue}")?;
                }
                Ok(())
            }
            PortSpec::Dpdk { device } => write!(f, "dpdk:{device}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<PortSpec, PortSpecError> {
        s.parse()
    }

    #[test]
    fn parses_every_kind() {
        assert_eq!(p("mem:h1").unwrap(), PortSpec::Mem { name: "h1".into() });
        assert_eq!(
            p("pcap:in.pcap,out=out.pcap").unwrap(),
            PortSpec::Pcap {
                input: Some("in.pcap".into()),
                output: Some("out.pcap".into()),
                paced: false
            }
        );
        assert_eq!(
            p("pcap:out=o.pcap").unwrap(),
            PortSpec::Pcap {
                input: None,
                output: Some("o.pcap".into()),
                paced: false
            }
        );
        assert_eq!(
            p("pcap:a.pcap,paced").unwrap(),
            PortSpec::Pcap {
                input: Some("a.pcap".into()),
                output: None,
                paced: true
            }
        );
        assert_eq!(
            p("afpacket:veth0").unwrap(),
            PortSpec::AfPacket {
                ifname: "veth0".into()
            }
        );
        assert_eq!(
            p("afxdp:eth1,zerocopy,queue=3").unwrap(),
            PortSpec::AfXdp {
                ifname: "eth1".into(),
                zerocopy: true,
                queue: 3
            }
        );
        assert_eq!(
            p("afxdp:eth1").unwrap(),
            PortSpec::AfXdp {
                ifname: "eth1".into(),
                zerocopy: false,
                queue: 0
            }
        );
        assert_eq!(
            p("dpdk:net_af_packet0,iface=v0").unwrap(),
            PortSpec::Dpdk {
                device: "net_af_packet0,iface=v0".into()
            }
        );
        assert_eq!(
            p("dpdk:0000:3b:00.0").unwrap(),
            PortSpec::Dpdk {
                device: "0000:3b:00.0".into()
            }
        );
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(p("  "), Err(PortSpecError::Empty));
        assert!(matches!(p("veth0"), Err(PortSpecError::MissingColon(_))));
        assert_eq!(p("tap:x"), Err(PortSpecError::UnknownKind("tap".into())));
        assert!(matches!(
            p("afpacket:"),
            Err(PortSpecError::MissingArgument {
                kind: "afpacket",
                ..
            })
        ));
        assert!(matches!(
            p("afpacket:averyveryverylongname"),
            Err(PortSpecError::BadInterfaceName { .. })
        ));
        assert!(matches!(
            p("afpacket:a/b"),
            Err(PortSpecError::BadInterfaceName { .. })
        ));
        assert!(matches!(
            p("afpacket:eth0,promisc"),
            Err(PortSpecError::UnknownOption { .. })
        ));
        assert!(matches!(
            p("afxdp:eth0,queue=x"),
            Err(PortSpecError::BadValue {
                option: "queue",
                ..
            })
        ));
        assert!(matches!(
            p("afxdp:eth0,queue=1,queue=2"),
            Err(PortSpecError::DuplicateOption { .. })
        ));
        assert!(matches!(
            p("pcap:"),
            Err(PortSpecError::MissingArgument { kind: "pcap", .. })
        ));
        assert!(matches!(
            p("pcap:a,b"),
            Err(PortSpecError::UnknownOption { .. })
        ));
        assert!(matches!(
            p("pcap:a,out="),
            Err(PortSpecError::BadValue { .. })
        ));
        assert!(matches!(p("mem:a b"), Err(PortSpecError::BadName { .. })));
        let msg = p("afxdp:eth0,queue=x").unwrap_err().to_string();
        assert!(msg.contains("queue") && msg.contains("\"x\""), "{msg}");
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "mem:h1",
            "pcap:in=a.pcap,out=b.pcap,paced",
            "pcap:out=b.pcap",
            "afpacket:veth0",
            "afxdp:eth0,zerocopy,queue=2",
            "dpdk:net_null0",
        ] {
            let spec = p(s).unwrap();
            assert_eq!(spec.to_string(), s);
            assert_eq!(p(&spec.to_string()).unwrap(), spec);
        }
    }
}
