//! A small hand-built TNA-shaped program for the control crate's tests, so the table-file and
//! STF machinery can drive a real [`Switch`] without the P4 compiler:
//!
//! - ingress: count every packet per ingress port (`SwitchIngress.port_counter`); `fwd` (exact
//!   on `hdr.ethernet.dst_addr`: `set_port`, `flood` through a multicast group with the ingress
//!   port as L2 exclusion id, `drop`); then `acl` (ternary on ether type and source MAC:
//!   `acl_redirect(port)` / `acl_deny`, both counted by the direct counter `acl_hits`);
//! - egress: count every packet per egress port (`SwitchEgress.out_counter`);
//! - registers `SwitchIngress.scratch` (32 bits) and `SwitchIngress.pairs` (two 16-bit words
//!   `first`/`second`), only touched through the runtime API.

#![allow(dead_code)]

use std::sync::Arc;

use pipeline::ir::*;

struct Phv {
    layout: PhvLayout,
}

impl Phv {
    fn new() -> Phv {
        Phv {
            layout: PhvLayout::default(),
        }
    }

    fn header(&mut self, name: &str, fields: &[(&str, u16)]) -> (HeaderId, Vec<FieldRef>) {
        let start = self.layout.bytes;
        let first = self.layout.fields.len() as u32;
        let mut bit = start * 8;
        let mut refs = Vec::new();
        for (f, w) in fields {
            let r = FieldRef {
                offset: bit,
                width: *w,
            };
            self.layout.fields.push(FieldInfo {
                name: format!("{name}.{f}"),
                field: r,
                signed: false,
            });
            refs.push(r);
            bit += u32::from(*w);
        }
        assert_eq!(bit % 8, 0, "{name} is not whole bytes");
        self.layout.bytes = bit / 8;
        let id = HeaderId(self.layout.headers.len() as u32);
        self.layout.headers.push(HeaderInfo {
            name: name.into(),
            type_name: format!("{name}_t"),
            byte_offset: start,
            byte_len: bit / 8 - start,
            fields: first..self.layout.fields.len() as u32,
        });
        (id, refs)
    }

    fn meta(&mut self, name: &str, width: u16) -> FieldRef {
        let r = FieldRef {
            offset: self.layout.bytes * 8,
            width,
        };
        self.layout.bytes += u32::from(width).div_ceil(8);
        self.layout.fields.push(FieldInfo {
            name: name.into(),
            field: r,
            signed: false,
        });
        r
    }
}

fn fld(r: FieldRef) -> Expr {
    Expr::Field(r)
}

fn assign(dst: FieldRef, value: Expr) -> Stmt {
    Stmt::Assign {
        dst: Place::Field(dst),
        value,
    }
}

fn act(name: &str, params: &[(&str, u16)], body: Vec<Stmt>) -> Action {
    Action {
        name: name.into(),
        params: params
            .iter()
            .map(|(n, w)| ActionParam {
                name: (*n).into(),
                width: *w,
            })
            .collect(),
        body,
    }
}

fn uses(ids: &[u32]) -> Vec<ActionRef> {
    ids.iter()
        .map(|i| ActionRef {
            action: ActionId(*i),
            default_only: false,
            table_only: false,
        })
        .collect()
}

fn eth(phv: &mut Phv) -> (HeaderId, Vec<FieldRef>) {
    phv.header(
        "hdr.ethernet",
        &[("dst_addr", 48), ("src_addr", 48), ("ether_type", 16)],
    )
}

fn control(name: &str, body: Vec<Stmt>) -> Control {
    Control {
        name: name.into(),
        body,
    }
}

/// The program described in the module doc.
pub fn mini_program() -> Arc<Program> {
    // ---- ingress ----
    let mut ig = Phv::new();
    let (h_intr, intr) = ig.header(
        "ig_intr_md",
        &[
            ("resubmit_flag", 1),
            ("_pad1", 1),
            ("packet_version", 2),
            ("_pad2", 3),
            ("ingress_port", 9),
            ("ingress_mac_tstamp", 48),
        ],
    );
    let (h_port_md, _) = ig.header("ig_md.port_md", &[("data", 64)]);
    let (h_eth, e) = eth(&mut ig);
    let ucast = ig.meta("ig_tm_md.ucast_egress_port", 9);
    let mcast_a = ig.meta("ig_tm_md.mcast_grp_a", 16);
    let rid = ig.meta("ig_tm_md.rid", 16);
    let l2_xid = ig.meta("ig_tm_md.level2_exclusion_id", 9);
    let drop_ctl = ig.meta("ig_dprsr_md.drop_ctl", 3);
    let parser_err = ig.meta("ig_prsr_md.parser_err", 16);
    let ingress_port = intr[4];

    // Action ids: 0 NoAction, 1 set_port, 2 flood, 3 drop, 4 acl_redirect, 5 acl_deny.
    let actions = vec![
        act("NoAction", &[], vec![]),
        act(
            "SwitchIngress.set_port",
            &[("port", 9)],
            vec![assign(ucast, Expr::Param { index: 0, width: 9 })],
        ),
        act(
            "SwitchIngress.flood",
            &[("mgid", 16)],
            vec![
                assign(
                    mcast_a,
                    Expr::Param {
                        index: 0,
                        width: 16,
                    },
                ),
                assign(rid, Expr::constant(0, 16)),
                assign(l2_xid, fld(ingress_port)),
            ],
        ),
        act(
            "SwitchIngress.drop",
            &[],
            vec![assign(drop_ctl, Expr::constant(1, 3))],
        ),
        act(
            "SwitchIngress.acl_redirect",
            &[("port", 9)],
            vec![
                Stmt::CountDirect {
                    counter: CounterId(1),
                },
                assign(ucast, Expr::Param { index: 0, width: 9 }),
            ],
        ),
        act(
            "SwitchIngress.acl_deny",
            &[],
            vec![
                Stmt::CountDirect {
                    counter: CounterId(1),
                },
                assign(drop_ctl, Expr::constant(1, 3)),
            ],
        ),
    ];
    let no_action = ActionCall {
        action: ActionId(0),
        args: vec![],
    };
    let table = |name: &str, keys: Vec<TableKey>, acts: &[u32]| Table {
        name: name.into(),
        gress: Gress::Ingress,
        keys,
        actions: uses(acts),
        default_action: no_action.clone(),
        default_action_const: false,
        const_entries: vec![],
        entries_const: false,
        size: 256,
        direct_counter: None,
        direct_meter: None,
        idle_timeout: false,
        stage: 0,
        hidden: false,
    };
    let key = |name: &str, r: FieldRef, kind: MatchKind| TableKey {
        name: name.into(),
        expr: fld(r),
        kind,
    };
    let fwd = table(
        "SwitchIngress.fwd",
        vec![key("hdr.ethernet.dst_addr", e[0], MatchKind::Exact)],
        &[1, 2, 3, 0],
    );
    let mut acl = table(
        "SwitchIngress.acl",
        vec![
            key("hdr.ethernet.ether_type", e[2], MatchKind::Ternary),
            key("hdr.ethernet.src_addr", e[1], MatchKind::Ternary),
        ],
        &[4, 5, 0],
    );
    acl.direct_counter = Some(CounterId(1));

    let ig_gress = GressProgram {
        phv: ig.layout,
        prefix: PrefixLayout {
            bytes: 16,
            fields: vec![
                (Intrinsic::IgResubmitFlag, intr[0]),
                (Intrinsic::IgPacketVersion, intr[2]),
                (Intrinsic::IgIngressPort, intr[4]),
                (Intrinsic::IgIngressMacTstamp, intr[5]),
            ],
        },
        intrinsics: IntrinsicBindings {
            fields: vec![
                (Intrinsic::IgIngressPort, ingress_port),
                (Intrinsic::TmUcastEgressPort, ucast),
                (Intrinsic::TmMcastGrpA, mcast_a),
                (Intrinsic::TmRid, rid),
                (Intrinsic::TmLevel2ExclusionId, l2_xid),
                (Intrinsic::IgDprsrDropCtl, drop_ctl),
                (Intrinsic::IgPrsrParserErr, parser_err),
            ],
        },
        parser: Parser {
            name: "SwitchIngressParser".into(),
            start: StateId(0),
            states: vec![ParserState {
                name: "SwitchIngressParser.start".into(),
                body: vec![
                    Stmt::Extract(h_intr),
                    Stmt::Extract(h_port_md),
                    Stmt::Extract(h_eth),
                ],
                transition: Transition::Direct(NextState::Accept),
            }],
        },
        control: control(
            "SwitchIngress",
            vec![
                Stmt::Count {
                    counter: CounterId(0),
                    index: fld(ingress_port),
                },
                Stmt::ApplyTable {
                    table: TableId(0),
                    branches: TableBranches::None,
                },
                Stmt::ApplyTable {
                    table: TableId(1),
                    branches: TableBranches::None,
                },
            ],
        ),
        deparser: control("SwitchIngressDeparser", vec![Stmt::Emit(h_eth)]),
    };

    // ---- egress ----
    let mut eg = Phv::new();
    let (h_eintr, ei) = eg.header(
        "eg_intr_md",
        &[
            ("_pad0", 7),
            ("egress_port", 9),
            ("egress_rid", 16),
            ("_pad1", 7),
            ("egress_rid_first", 1),
            ("pkt_length", 16),
        ],
    );
    let (h_eeth, _) = eth(&mut eg);
    let e_drop_ctl = eg.meta("eg_dprsr_md.drop_ctl", 3);
    let eg_gress = GressProgram {
        phv: eg.layout,
        prefix: PrefixLayout {
            bytes: 7,
            fields: vec![
                (Intrinsic::EgEgressPort, ei[1]),
                (Intrinsic::EgEgressRid, ei[2]),
                (Intrinsic::EgEgressRidFirst, ei[4]),
                (Intrinsic::EgPktLength, ei[5]),
            ],
        },
        intrinsics: IntrinsicBindings {
            fields: vec![
                (Intrinsic::EgEgressPort, ei[1]),
                (Intrinsic::EgDprsrDropCtl, e_drop_ctl),
            ],
        },
        parser: Parser {
            name: "SwitchEgressParser".into(),
            start: StateId(0),
            states: vec![ParserState {
                name: "SwitchEgressParser.start".into(),
                body: vec![Stmt::Extract(h_eintr), Stmt::Extract(h_eeth)],
                transition: Transition::Direct(NextState::Accept),
            }],
        },
        control: control(
            "SwitchEgress",
            vec![Stmt::Count {
                counter: CounterId(2),
                index: fld(ei[1]),
            }],
        ),
        deparser: control("SwitchEgressDeparser", vec![Stmt::Emit(h_eeth)]),
    };

    let counter = |name: &str, size: u32, direct: Option<u32>| Counter {
        name: name.into(),
        kind: CounterKind::PacketsAndBytes,
        size,
        direct_table: direct.map(TableId),
        bytes: Default::default(),
    };
    let register = |name: &str, width: u16, paired: bool| Register {
        name: name.into(),
        gress: Gress::Ingress,
        size: 8,
        width,
        paired,
        word_names: paired.then(|| ("first".to_string(), "second".to_string())),
        initial_lo: 0,
        initial_hi: 0,
        direct_table: None,
        stage: 0,
    };
    Arc::new(Program {
        name: "mini".into(),
        target: Target::Tofino1,
        pipelines: vec![Pipeline {
            name: "pipe".into(),
            ingress: ig_gress,
            egress: eg_gress,
            tables: vec![fwd, acl],
            actions,
            registers: vec![
                register("SwitchIngress.scratch", 32, false),
                register("SwitchIngress.pairs", 16, true),
            ],
            register_actions: vec![],
            register_params: vec![],
            hashes: vec![],
            counters: vec![
                counter("SwitchIngress.port_counter", 512, None),
                counter("SwitchIngress.acl_hits", 256, Some(1)),
                counter("SwitchEgress.out_counter", 512, None),
            ],
            meters: vec![],
            checksums: vec![],
            digests: vec![],
            action_profiles: Vec::new(),
            value_sets: Vec::new(),
            filters: Vec::new(),
            ghost: None,
        }],
        pipe_map: vec![0, 0, 0, 0],
        errors: ErrorEnum::default(),
    })
}

/// An Ethernet frame: destination, source, ether type, then `payload_len` bytes 0, 1, 2, ...
pub fn frame(dst: u64, src: u64, ether_type: u16, payload_len: usize) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst.to_be_bytes()[2..]);
    f.extend_from_slice(&src.to_be_bytes()[2..]);
    f.extend_from_slice(&ether_type.to_be_bytes());
    f.extend((0..payload_len).map(|i| i as u8));
    f
}

/// Hex of a frame, as an STF `packet` / `expect` line wants it.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
