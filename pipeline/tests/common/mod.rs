//! Hand-built IR for the executor's integration tests: a tiny TNA-shaped L2/L3 program
//! (ethernet forwarding, an ACL that can drop or mirror, an IPv4 LPM route that decrements the
//! TTL and updates the checksum, a per-port packet counter in a register, resubmit, digest on
//! unknown source, recirculation via a loopback port, and an egress that tags replicas and
//! mirror copies), plus small builders used to write it.

#![allow(dead_code)]

use std::sync::Arc;

use pipeline::ir::*;

/// Allocates header instances and metadata fields in a PHV, byte-aligned, in call order.
#[derive(Default)]
pub struct LayoutBuilder {
    pub phv: PhvLayout,
}

impl LayoutBuilder {
    /// Add a header of `(field, width)` pairs; returns its id and field refs.
    pub fn header(
        &mut self,
        name: &str,
        ty: &str,
        fields: &[(&str, u16)],
    ) -> (HeaderId, Vec<FieldRef>) {
        let start = self.phv.bytes;
        let first = self.phv.fields.len() as u32;
        let mut bit = start * 8;
        let mut refs = Vec::new();
        for (f, w) in fields {
            let r = FieldRef {
                offset: bit,
                width: *w,
            };
            self.phv.fields.push(FieldInfo {
                name: format!("{name}.{f}"),
                field: r,
                signed: false,
            });
            refs.push(r);
            bit += *w as u32;
        }
        assert_eq!(bit % 8, 0, "header {name} is not a whole number of bytes");
        let len = bit / 8 - start;
        self.phv.bytes += len;
        let id = HeaderId(self.phv.headers.len() as u32);
        self.phv.headers.push(HeaderInfo {
            name: name.into(),
            type_name: ty.into(),
            byte_offset: start,
            byte_len: len,
            fields: first..self.phv.fields.len() as u32,
        });
        (id, refs)
    }

    /// A metadata field in bytes of its own.
    pub fn meta(&mut self, name: &str, width: u16) -> FieldRef {
        let r = FieldRef {
            offset: self.phv.bytes * 8,
            width,
        };
        self.phv.bytes += (width as u32).div_ceil(8);
        self.phv.fields.push(FieldInfo {
            name: name.into(),
            field: r,
            signed: false,
        });
        r
    }
}

pub fn f(r: FieldRef) -> Expr {
    Expr::Field(r)
}
pub fn c(v: Value, w: u16) -> Expr {
    Expr::Const { value: v, width: w }
}
pub fn p(index: u16, width: u16) -> Expr {
    Expr::Param { index, width }
}
pub fn bin(op: BinOp, a: Expr, b: Expr, width: u16) -> Expr {
    Expr::Binary {
        op,
        a: Box::new(a),
        b: Box::new(b),
        width,
        signed: false,
    }
}
pub fn eq(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Eq, a, b, 1)
}
pub fn set(dst: FieldRef, v: Expr) -> Stmt {
    Stmt::Assign {
        dst: Place::Field(dst),
        value: v,
    }
}
pub fn if_(cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>) -> Stmt {
    Stmt::If {
        cond,
        then,
        els,
        stage: 0,
    }
}
pub fn apply(t: u32) -> Stmt {
    Stmt::ApplyTable {
        table: TableId(t),
        branches: TableBranches::None,
    }
}
pub fn mask_ks(v: Value, m: Value) -> KeysetElem {
    KeysetElem::Mask { value: v, mask: m }
}

pub fn action(name: &str, params: &[(&str, u16)], body: Vec<Stmt>) -> Action {
    Action {
        name: name.into(),
        params: params
            .iter()
            .map(|(n, w)| ActionParam {
                name: n.to_string(),
                width: *w,
            })
            .collect(),
        body,
    }
}

pub fn aref(a: u32) -> ActionRef {
    ActionRef {
        action: ActionId(a),
        default_only: false,
        table_only: false,
    }
}

/// Ingress fields the tests look at.
pub struct IgFields {
    pub ingress_port: FieldRef,
    pub resubmit_flag: FieldRef,
    pub resub_data: FieldRef,
    pub eth_dst: FieldRef,
    pub eth_src: FieldRef,
    pub eth_type: FieldRef,
    pub ttl: FieldRef,
    pub ipv4_dst: FieldRef,
    pub ipv4_csum: FieldRef,
    pub ucast: FieldRef,
    pub mcast_a: FieldRef,
    pub rid: FieldRef,
    pub l1_xid: FieldRef,
    pub l2_xid: FieldRef,
    pub copy_to_cpu: FieldRef,
    pub bypass: FieldRef,
    pub drop_ctl: FieldRef,
    pub mirror_type: FieldRef,
    pub resubmit_type: FieldRef,
    pub digest_type: FieldRef,
    pub parser_err: FieldRef,
    pub mirror_session: FieldRef,
    pub resub_port: FieldRef,
    pub pkt_count: FieldRef,
}

// Action ids of the program below.
pub const A_NOACTION: u32 = 0;
pub const A_SET_PORT: u32 = 1;
pub const A_SET_MCAST: u32 = 2;
pub const A_DROP: u32 = 3;
pub const A_MIRROR: u32 = 4;
pub const A_ROUTE: u32 = 5;
pub const A_RESUBMIT: u32 = 6;
pub const A_COUNT_PORT: u32 = 7;
pub const A_TO_CPU: u32 = 8;
// Table ids.
pub const T_FORWARD: u32 = 0;
pub const T_ACL: u32 = 1;
pub const T_ROUTE: u32 = 2;
pub const T_RESUB: u32 = 3;
pub const T_PORTCOUNT: u32 = 4;

pub const LOOPBACK_PORT: u16 = 68;
pub const E2E_MIRROR_PORT: u16 = 9;

fn ipv4_fields() -> Vec<(&'static str, u16)> {
    vec![
        ("version", 4),
        ("ihl", 4),
        ("diffserv", 8),
        ("total_len", 16),
        ("identification", 16),
        ("flags", 3),
        ("frag_offset", 13),
        ("ttl", 8),
        ("protocol", 8),
        ("hdr_checksum", 16),
        ("src_addr", 32),
        ("dst_addr", 32),
    ]
}

fn eth_fields() -> Vec<(&'static str, u16)> {
    vec![("dst_addr", 48), ("src_addr", 48), ("ether_type", 16)]
}

/// Options that change the program (to test program errors).
#[derive(Default, Clone, Copy)]
pub struct Options {
    /// The control executes the port-counter RegisterAction twice.
    pub double_register_access: bool,
    /// The ingress control reads `parser_err` (so parser errors do not drop).
    pub read_parser_err: bool,
    /// The ACL's key also has `ig_intr_md.ingress_port` as a range field (73 bits in all:
    /// a TCAM key packed into more than one word, with a range checked per row).
    pub wide_acl: bool,
}

/// The test program and the field refs tests need.
pub fn l2_program(opts: Options) -> (Arc<Program>, IgFields) {
    // ---------------- ingress PHV ----------------
    let mut ig = LayoutBuilder::default();
    let (h_intr, intr) = ig.header(
        "ig_intr_md",
        "ingress_intrinsic_metadata_t",
        &[
            ("resubmit_flag", 1),
            ("_pad1", 1),
            ("packet_version", 2),
            ("_pad2", 3),
            ("ingress_port", 9),
            ("ingress_mac_tstamp", 48),
        ],
    );
    let (h_resub, resub) = ig.header("meta.resub", "resub_h", &[("port", 8), ("data", 56)]);
    let (h_bridge, bridge) = ig.header("hdr.bridge", "bridge_h", &[("type", 8)]);
    let (h_eth, eth) = ig.header("hdr.ethernet", "ethernet_h", &eth_fields());
    let (h_ip, ip) = ig.header("hdr.ipv4", "ipv4_h", &ipv4_fields());
    let ucast = ig.meta("ig_tm_md.ucast_egress_port", 9);
    let mcast_a = ig.meta("ig_tm_md.mcast_grp_a", 16);
    let mcast_b = ig.meta("ig_tm_md.mcast_grp_b", 16);
    let rid = ig.meta("ig_tm_md.rid", 16);
    let l1_xid = ig.meta("ig_tm_md.level1_exclusion_id", 16);
    let l2_xid = ig.meta("ig_tm_md.level2_exclusion_id", 9);
    let copy_to_cpu = ig.meta("ig_tm_md.copy_to_cpu", 1);
    let bypass = ig.meta("ig_tm_md.bypass_egress", 1);
    let drop_ctl = ig.meta("ig_dprsr_md.drop_ctl", 3);
    let mirror_type = ig.meta("ig_dprsr_md.mirror_type", 3);
    let resubmit_type = ig.meta("ig_dprsr_md.resubmit_type", 3);
    let digest_type = ig.meta("ig_dprsr_md.digest_type", 3);
    let parser_err = ig.meta("ig_prsr_md.parser_err", 16);
    let tstamp = ig.meta("ig_prsr_md.global_tstamp", 48);
    let mirror_session = ig.meta("meta.mirror_session", 10);
    let resub_port = ig.meta("meta.resub_port", 8);
    let pkt_count = ig.meta("meta.pkt_count", 32);
    let err_seen = ig.meta("meta.err_seen", 16);

    let ig_prefix = PrefixLayout {
        bytes: 16,
        fields: vec![
            (Intrinsic::IgResubmitFlag, intr[0]),
            (Intrinsic::IgPacketVersion, intr[2]),
            (Intrinsic::IgIngressPort, intr[4]),
            (Intrinsic::IgIngressMacTstamp, intr[5]),
        ],
    };
    let ig_intrinsics = IntrinsicBindings {
        fields: vec![
            (Intrinsic::IgResubmitFlag, intr[0]),
            (Intrinsic::IgIngressPort, intr[4]),
            (Intrinsic::IgIngressMacTstamp, intr[5]),
            (Intrinsic::TmUcastEgressPort, ucast),
            (Intrinsic::TmMcastGrpA, mcast_a),
            (Intrinsic::TmMcastGrpB, mcast_b),
            (Intrinsic::TmRid, rid),
            (Intrinsic::TmLevel1ExclusionId, l1_xid),
            (Intrinsic::TmLevel2ExclusionId, l2_xid),
            (Intrinsic::TmCopyToCpu, copy_to_cpu),
            (Intrinsic::TmBypassEgress, bypass),
            (Intrinsic::IgDprsrDropCtl, drop_ctl),
            (Intrinsic::IgDprsrMirrorType, mirror_type),
            (Intrinsic::IgDprsrResubmitType, resubmit_type),
            (Intrinsic::IgDprsrDigestType, digest_type),
            (Intrinsic::IgPrsrParserErr, parser_err),
            (Intrinsic::IgPrsrGlobalTstamp, tstamp),
        ],
    };

    // Ingress parser: intrinsic md, port metadata / resubmit data, ethernet, ipv4.
    let ig_parser = Parser {
        name: "SwitchIngressParser".into(),
        start: StateId(0),
        states: vec![
            ParserState {
                name: "SwitchIngressParser.start".into(),
                body: vec![
                    Stmt::Extract(h_intr),
                    Stmt::Extract(h_resub),
                    Stmt::Extract(h_eth),
                ],
                transition: Transition::Select {
                    keys: vec![f(eth[2])],
                    cases: vec![SelectCase {
                        keyset: vec![mask_ks(0x0800, 0xffff)],
                        next: NextState::State(StateId(1)),
                    }],
                    default: NextState::Accept,
                },
            },
            ParserState {
                name: "SwitchIngressParser.parse_ipv4".into(),
                body: vec![Stmt::Extract(h_ip)],
                transition: Transition::Direct(NextState::Accept),
            },
        ],
    };

    // ---------------- egress PHV ----------------
    let mut eg = LayoutBuilder::default();
    let (h_eintr, eintr) = eg.header(
        "eg_intr_md",
        "egress_intrinsic_metadata_t",
        &[
            ("_pad0", 7),
            ("egress_port", 9),
            ("egress_rid", 16),
            ("_pad1", 7),
            ("egress_rid_first", 1),
            ("pkt_length", 16),
            ("_pad2", 5),
            ("enq_qdepth", 19),
            ("deq_timedelta", 32),
        ],
    );
    let (h_ebridge, _ebridge) = eg.header("hdr.bridge", "bridge_h", &[("type", 8)]);
    let (h_emirror, _emirror) = eg.header("hdr.mirror", "mirror_h", &[("type", 8)]);
    let (h_eeth, eeth) = eg.header("hdr.ethernet", "ethernet_h", &eth_fields());
    let (h_eip, _eip) = eg.header("hdr.ipv4", "ipv4_h", &ipv4_fields());
    let e_drop_ctl = eg.meta("eg_dprsr_md.drop_ctl", 3);
    let e_mirror_type = eg.meta("eg_dprsr_md.mirror_type", 3);
    let eg_prefix = PrefixLayout {
        bytes: 14,
        fields: vec![
            (Intrinsic::EgEgressPort, eintr[1]),
            (Intrinsic::EgEgressRid, eintr[2]),
            (Intrinsic::EgEgressRidFirst, eintr[4]),
            (Intrinsic::EgPktLength, eintr[5]),
            (Intrinsic::EgEnqQdepth, eintr[7]),
            (Intrinsic::EgDeqTimedelta, eintr[8]),
        ],
    };
    let eg_intrinsics = IntrinsicBindings {
        fields: vec![
            (Intrinsic::EgEgressPort, eintr[1]),
            (Intrinsic::EgEgressRid, eintr[2]),
            (Intrinsic::EgDprsrDropCtl, e_drop_ctl),
            (Intrinsic::EgDprsrMirrorType, e_mirror_type),
        ],
    };
    let eg_parser = Parser {
        name: "SwitchEgressParser".into(),
        start: StateId(0),
        states: vec![
            ParserState {
                name: "SwitchEgressParser.start".into(),
                body: vec![Stmt::Extract(h_eintr)],
                transition: Transition::Select {
                    keys: vec![Expr::Lookahead {
                        offset_bits: 0,
                        width: 8,
                    }],
                    cases: vec![
                        SelectCase {
                            keyset: vec![mask_ks(0, 0xff)],
                            next: NextState::State(StateId(1)),
                        },
                        SelectCase {
                            keyset: vec![mask_ks(1, 0xff)],
                            next: NextState::State(StateId(2)),
                        },
                    ],
                    default: NextState::Reject,
                },
            },
            ParserState {
                name: "SwitchEgressParser.parse_bridge".into(),
                body: vec![Stmt::Extract(h_ebridge)],
                transition: Transition::Direct(NextState::State(StateId(3))),
            },
            ParserState {
                name: "SwitchEgressParser.parse_mirror".into(),
                body: vec![Stmt::Extract(h_emirror)],
                transition: Transition::Direct(NextState::State(StateId(3))),
            },
            ParserState {
                name: "SwitchEgressParser.parse_ethernet".into(),
                body: vec![Stmt::Extract(h_eeth)],
                transition: Transition::Select {
                    keys: vec![f(eeth[2])],
                    cases: vec![SelectCase {
                        keyset: vec![mask_ks(0x0800, 0xffff)],
                        next: NextState::State(StateId(4)),
                    }],
                    default: NextState::Accept,
                },
            },
            ParserState {
                name: "SwitchEgressParser.parse_ipv4".into(),
                body: vec![Stmt::Extract(h_eip)],
                transition: Transition::Direct(NextState::Accept),
            },
        ],
    };

    // ---------------- actions ----------------
    let actions = vec![
        action("NoAction", &[], vec![]),
        action(
            "SwitchIngress.set_port",
            &[("port", 9)],
            vec![set(ucast, p(0, 9))],
        ),
        action(
            "SwitchIngress.set_mcast",
            &[("grp", 16), ("rid", 16), ("l1_xid", 16), ("l2_xid", 9)],
            vec![
                set(mcast_a, p(0, 16)),
                set(rid, p(1, 16)),
                set(l1_xid, p(2, 16)),
                set(l2_xid, p(3, 9)),
            ],
        ),
        action("SwitchIngress.drop", &[], vec![set(drop_ctl, c(1, 3))]),
        action(
            "SwitchIngress.mirror",
            &[("session", 10)],
            vec![set(mirror_type, c(1, 3)), set(mirror_session, p(0, 10))],
        ),
        action(
            "SwitchIngress.route",
            &[("port", 9), ("dmac", 48)],
            vec![
                set(ucast, p(0, 9)),
                set(eth[0], p(1, 48)),
                set(ip[7], bin(BinOp::Sub, f(ip[7]), c(1, 8), 8)),
            ],
        ),
        action(
            "SwitchIngress.do_resubmit",
            &[("port", 8)],
            vec![set(resubmit_type, c(1, 3)), set(resub_port, p(0, 8))],
        ),
        action(
            "SwitchIngress.count_port",
            &[],
            vec![set(
                pkt_count,
                Expr::RegisterExecute {
                    action: RegisterActionId(0),
                    index: Box::new(f(intr[4])),
                    width: 32,
                },
            )],
        ),
        action("SwitchIngress.to_cpu", &[], vec![set(copy_to_cpu, c(1, 1))]),
    ];

    let table = |name: &str, keys: Vec<TableKey>, acts: Vec<ActionRef>, stage: u8| Table {
        name: name.into(),
        gress: Gress::Ingress,
        keys,
        actions: acts,
        default_action: ActionCall {
            action: ActionId(A_NOACTION),
            args: vec![],
        },
        default_action_const: false,
        const_entries: vec![],
        entries_const: false,
        size: 1024,
        direct_counter: None,
        direct_meter: None,
        idle_timeout: false,
        stage,
        hidden: false,
    };
    let key = |name: &str, r: FieldRef, kind: MatchKind| TableKey {
        name: name.into(),
        expr: f(r),
        kind,
    };
    let mut forward = table(
        "SwitchIngress.forward",
        vec![key("hdr.ethernet.dst_addr", eth[0], MatchKind::Exact)],
        vec![
            aref(A_SET_PORT),
            aref(A_SET_MCAST),
            aref(A_DROP),
            aref(A_TO_CPU),
            aref(A_NOACTION),
        ],
        0,
    );
    forward.direct_counter = Some(CounterId(1));
    let mut acl_keys = vec![
        key("hdr.ethernet.src_addr", eth[1], MatchKind::Ternary),
        key("hdr.ethernet.ether_type", eth[2], MatchKind::Ternary),
    ];
    if opts.wide_acl {
        acl_keys.push(key("ig_intr_md.ingress_port", intr[4], MatchKind::Range));
    }
    let acl = table(
        "SwitchIngress.acl",
        acl_keys,
        vec![
            aref(A_DROP),
            aref(A_MIRROR),
            ActionRef {
                action: ActionId(A_NOACTION),
                default_only: true,
                table_only: false,
            },
        ],
        1,
    );
    let route = table(
        "SwitchIngress.ipv4_lpm",
        vec![key("hdr.ipv4.dst_addr", ip[11], MatchKind::Lpm)],
        vec![aref(A_ROUTE), aref(A_DROP), aref(A_NOACTION)],
        1,
    );
    let mut resub_t = table(
        "SwitchIngress.resub",
        vec![key("hdr.ethernet.ether_type", eth[2], MatchKind::Exact)],
        vec![aref(A_RESUBMIT), aref(A_NOACTION)],
        2,
    );
    resub_t.const_entries = vec![ConstEntry {
        keys: vec![KeyMatch::Exact(0x88b5)],
        priority: None,
        action: ActionCall {
            action: ActionId(A_RESUBMIT),
            args: vec![5],
        },
    }];
    resub_t.entries_const = true;
    let mut portcount = table(
        "SwitchIngress.portcount",
        vec![],
        vec![aref(A_COUNT_PORT)],
        3,
    );
    portcount.default_action = ActionCall {
        action: ActionId(A_COUNT_PORT),
        args: vec![],
    };
    portcount.default_action_const = true;

    // ---------------- ingress control ----------------
    let mut ig_body = vec![
        Stmt::SetValid {
            header: h_bridge,
            valid: true,
        },
        set(bridge[0], c(0, 8)),
        // Recirculated packets come back on the loopback port: send them to port 3 tagged.
        if_(
            eq(f(intr[4]), c(LOOPBACK_PORT as Value, 9)),
            vec![set(ucast, c(3, 9)), set(eth[2], c(0x1234, 16)), Stmt::Exit],
            vec![],
        ),
        // A resubmitted packet goes where its resubmit data says.
        if_(
            eq(f(intr[0]), c(1, 1)),
            vec![set(ucast, f(resub[0])), Stmt::Exit],
            vec![],
        ),
        Stmt::ApplyTable {
            table: TableId(T_FORWARD),
            branches: TableBranches::HitMiss {
                hit: vec![],
                miss: vec![set(digest_type, c(1, 3))],
            },
        },
        apply(T_ACL),
        if_(Expr::Valid(h_ip), vec![apply(T_ROUTE)], vec![]),
        apply(T_RESUB),
        apply(T_PORTCOUNT),
        Stmt::Count {
            counter: CounterId(0),
            index: f(intr[4]),
        },
    ];
    if opts.double_register_access {
        ig_body.push(Stmt::CallAction {
            action: ActionId(A_COUNT_PORT),
            args: vec![],
        });
    }
    if opts.read_parser_err {
        ig_body.insert(0, set(err_seen, f(parser_err)));
    }
    // The direct counter counts in set_port.
    let mut actions = actions;
    actions[A_SET_PORT as usize].body.push(Stmt::CountDirect {
        counter: CounterId(1),
    });

    let ipv4_csum_inputs: Vec<Expr> = (0..12).filter(|i| *i != 9).map(|i| f(ip[i])).collect();
    let ig_deparser = vec![
        if_(
            eq(f(mirror_type), c(1, 3)),
            vec![Stmt::MirrorEmit {
                session: f(mirror_session),
                header: vec![c(1, 8)],
            }],
            vec![],
        ),
        if_(
            eq(f(resubmit_type), c(1, 3)),
            vec![Stmt::ResubmitEmit {
                header: vec![f(resub_port), c(0, 56)],
            }],
            vec![],
        ),
        if_(
            eq(f(digest_type), c(1, 3)),
            vec![Stmt::DigestPack {
                digest: DigestId(0),
                fields: vec![f(eth[1]), f(intr[4])],
            }],
            vec![],
        ),
        if_(
            Expr::Valid(h_ip),
            vec![set(
                ip[9],
                Expr::ChecksumUpdate {
                    checksum: ChecksumId(0),
                    inputs: ipv4_csum_inputs,
                },
            )],
            vec![],
        ),
        Stmt::Emit(h_bridge),
        Stmt::Emit(h_eth),
        Stmt::Emit(h_ip),
    ];

    // ---------------- egress control ----------------
    let eg_body = vec![
        if_(
            Expr::Valid(h_emirror),
            vec![set(eeth[2], c(0x9999, 16))],
            vec![],
        ),
        if_(
            bin(BinOp::Ne, f(eintr[2]), c(0, 16), 1),
            vec![Stmt::Assign {
                dst: Place::FieldSlice {
                    field: eeth[1],
                    hi: 15,
                    lo: 0,
                },
                value: f(eintr[2]),
            }],
            vec![],
        ),
        if_(
            bin(
                BinOp::LAnd,
                eq(f(eintr[1]), c(E2E_MIRROR_PORT as Value, 9)),
                Expr::Unary {
                    op: UnOp::LNot,
                    arg: Box::new(Expr::Valid(h_emirror)),
                    width: 1,
                },
                1,
            ),
            vec![set(e_mirror_type, c(1, 3))],
            vec![],
        ),
    ];
    let eg_deparser = vec![
        if_(
            eq(f(e_mirror_type), c(1, 3)),
            vec![Stmt::MirrorEmit {
                session: c(7, 10),
                header: vec![c(1, 8)],
            }],
            vec![],
        ),
        Stmt::Emit(h_eeth),
        Stmt::Emit(h_eip),
    ];

    let pipeline = Pipeline {
        name: "pipe".into(),
        ingress: GressProgram {
            phv: ig.phv,
            prefix: ig_prefix,
            intrinsics: ig_intrinsics,
            parser: ig_parser,
            control: Control {
                name: "SwitchIngress".into(),
                body: ig_body,
            },
            deparser: Control {
                name: "SwitchIngressDeparser".into(),
                body: ig_deparser,
            },
        },
        egress: GressProgram {
            phv: eg.phv,
            prefix: eg_prefix,
            intrinsics: eg_intrinsics,
            parser: eg_parser,
            control: Control {
                name: "SwitchEgress".into(),
                body: eg_body,
            },
            deparser: Control {
                name: "SwitchEgressDeparser".into(),
                body: eg_deparser,
            },
        },
        tables: vec![forward, acl, route, resub_t, portcount],
        actions,
        registers: vec![Register {
            name: "SwitchIngress.port_pkts".into(),
            gress: Gress::Ingress,
            size: 512,
            width: 32,
            paired: false,
            word_names: None,
            initial_lo: 0,
            initial_hi: 0,
            direct_table: None,
            stage: 3,
        }],
        register_actions: vec![RegisterAction {
            name: "SwitchIngress.port_pkts_inc".into(),
            register: RegisterId(0),
            body: vec![
                Stmt::Assign {
                    dst: Place::RegValue(RegWord::Lo),
                    value: bin(BinOp::Add, Expr::RegValue(RegWord::Lo), c(1, 32), 32),
                },
                Stmt::Assign {
                    dst: Place::RegOutput,
                    value: Expr::RegValue(RegWord::Lo),
                },
            ],
            output_width: 32,
            wide: false,
            overflow: None,
            underflow: None,
        }],
        register_params: vec![],
        hashes: vec![],
        counters: vec![
            Counter {
                name: "SwitchIngress.port_counter".into(),
                kind: CounterKind::PacketsAndBytes,
                size: 512,
                direct_table: None,
                bytes: Default::default(),
            },
            Counter {
                name: "SwitchIngress.forward_counter".into(),
                kind: CounterKind::PacketsAndBytes,
                size: 1024,
                direct_table: Some(TableId(T_FORWARD)),
                bytes: Default::default(),
            },
        ],
        meters: vec![],
        checksums: vec![Checksum {
            name: "SwitchIngressDeparser.ipv4_checksum".into(),
            gress: Gress::Ingress,
        }],
        digests: vec![Digest {
            name: "SwitchIngressDeparser.learn".into(),
            type_name: "learn_t".into(),
            fields: vec![("src_addr".into(), 48), ("ingress_port".into(), 9)],
        }],
        action_profiles: Vec::new(),
        value_sets: Vec::new(),
        filters: Vec::new(),
        ghost: None,
    };
    let prog = Program {
        name: "l2_test".into(),
        target: Target::Tofino1,
        pipelines: vec![pipeline],
        pipe_map: vec![0, 0, 0, 0],
        errors: ErrorEnum {
            names: vec!["NoError".into(), "PacketTooShort".into(), "NoMatch".into()],
        },
    };
    let fields = IgFields {
        ingress_port: intr[4],
        resubmit_flag: intr[0],
        resub_data: resub[1],
        eth_dst: eth[0],
        eth_src: eth[1],
        eth_type: eth[2],
        ttl: ip[7],
        ipv4_dst: ip[11],
        ipv4_csum: ip[9],
        ucast,
        mcast_a,
        rid,
        l1_xid,
        l2_xid,
        copy_to_cpu,
        bypass,
        drop_ctl,
        mirror_type,
        resubmit_type,
        digest_type,
        parser_err,
        mirror_session,
        resub_port,
        pkt_count,
    };
    (Arc::new(prog), fields)
}

/// An ethernet frame (64 B) with the given addresses and type; payload bytes count up.
pub fn eth_frame(dst: u64, src: u64, ether_type: u16) -> Vec<u8> {
    let mut v = Vec::with_capacity(64);
    v.extend_from_slice(&dst.to_be_bytes()[2..]);
    v.extend_from_slice(&src.to_be_bytes()[2..]);
    v.extend_from_slice(&ether_type.to_be_bytes());
    while v.len() < 64 {
        v.push(v.len() as u8);
    }
    v
}

/// An ethernet + IPv4 frame (64 B) with a correct header checksum.
pub fn ipv4_frame(dst_mac: u64, src_mac: u64, src_ip: u32, dst_ip: u32, ttl: u8) -> Vec<u8> {
    let mut v = eth_frame(dst_mac, src_mac, 0x0800);
    v.truncate(14);
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&50u16.to_be_bytes());
    ip[8] = ttl;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&src_ip.to_be_bytes());
    ip[16..20].copy_from_slice(&dst_ip.to_be_bytes());
    let cs = ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&cs.to_be_bytes());
    v.extend_from_slice(&ip);
    while v.len() < 64 {
        v.push(0xee);
    }
    v
}

/// RFC 1071 checksum of a header whose checksum field is zero or ignored.
pub fn ipv4_checksum(hdr: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for (i, pair) in hdr.chunks(2).enumerate() {
        if i == 5 {
            continue;
        }
        sum += u32::from(u16::from_be_bytes([pair[0], pair[1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}
