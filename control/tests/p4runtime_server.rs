//! P4Runtime conformance points, with the tonic client against pisa's server in-process on
//! l2l3.p4 (a live switch on in-memory ports, the CPU port at device port 64): capabilities,
//! arbitration (primary, backups, no failover without a new arbitration, PERMISSION_DENIED),
//! write/read round trips for exact / LPM / ternary+range entries, per-update errors, default
//! actions, counters, PRE entries, pipeline config actions, and packet-out → packet-in; other
//! programs for controller headers, action selectors, digests and direct resources.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use control::p4runtime::p4info::{self, P4Program};
use control::p4runtime::proto::google::rpc;
use control::p4runtime::proto::p4::config::v1 as pi;
use control::p4runtime::proto::p4::v1 as p4v1;
use control::p4runtime::proto::p4::v1::p4_runtime_client::P4RuntimeClient;
use control::p4runtime::server::{self, P4RuntimeServerHandle, Pipeline, ServerConfig};
use dataplane::mem::pair;
use dataplane::runtime::{PortSetup, RuntimeConfig};
use dataplane::switch::SwitchRuntime;
use dataplane::{Clock, FrameBatch, LinkConfig, MemPort, Nanos, Port, WallClock};
use pipeline::switch::{Switch, SwitchConfig};
use prost::Message;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic::{Code, Status, Streaming};

use p4v1::entity::Entity as E;
use p4v1::field_match::FieldMatchType as F;

struct Rig {
    server: P4RuntimeServerHandle,
    rt: Option<SwitchRuntime>,
    hosts: Vec<MemPort>,
    source: String,
    info: pi::P4Info,
}

impl Drop for Rig {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            let _ = rt.stop();
        }
    }
}

fn l2l3() -> (P4Program, String) {
    compiled("../p4/programs/l2l3.p4")
}

fn compiled(rel: &str) -> (P4Program, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let opts = p4::compile::CompileOptions::default();
    let c = p4::compile::compile_file(&path, &opts).unwrap();
    (
        p4info::for_file(c.program, &path, &opts),
        std::fs::read_to_string(&path).unwrap(),
    )
}

fn rig() -> Rig {
    rig_of(l2l3())
}

fn rig_of(p: (P4Program, String)) -> Rig {
    rig_on(p, &[1, 2], false)
}

/// A rig with host ports at `devports` (and the CPU port 64); `per_pipe`: one switch
/// instance and thread per pipe with ports.
fn rig_on((prog, source): (P4Program, String), devports: &[u16], per_pipe: bool) -> Rig {
    let mut pipes: Vec<u16> = devports.iter().map(|d| d >> 7).collect();
    pipes.sort_unstable();
    pipes.dedup();
    let count = if per_pipe { pipes.len() } else { 1 };
    let switches: Vec<Switch> = (0..count)
        .map(|_| {
            Switch::new(
                Arc::new(prog.program.clone()),
                SwitchConfig::new(4).with_cpu_port(64),
            )
            .unwrap()
        })
        .collect();
    let mut hosts = Vec::new();
    let mut ports = Vec::new();
    for &dp in devports {
        let (s, h) = pair(&format!("sw{dp}"), &format!("h{dp}"));
        hosts.push(h);
        ports.push(PortSetup {
            devport: dp,
            port: Box::new(s),
            link: LinkConfig::default(),
        });
    }
    let (cpu_sw, cpu_ctl) = pair("cpu", "ctl");
    ports.push(PortSetup {
        devport: 64,
        port: Box::new(cpu_sw),
        link: LinkConfig::default(),
    });
    let clock: Arc<dyn Clock> = Arc::new(WallClock::new());
    let thread_pipes: &[u16] = if per_pipe { &pipes } else { &[] };
    let rt = SwitchRuntime::start(
        switches,
        per_pipe,
        thread_pipes,
        ports,
        clock.clone(),
        RuntimeConfig::default(),
    )
    .unwrap();
    let info = prog.p4info.clone();
    let server = server::start(
        "127.0.0.1:0".parse().unwrap(),
        rt.handle(),
        Pipeline::new(prog, source.clone().into_bytes(), None),
        ServerConfig {
            device_id: 1,
            compile: p4::compile::CompileOptions::default(),
            cpu: Some(Box::new(cpu_ctl)),
            clock,
        },
    )
    .unwrap();
    Rig {
        server,
        rt: Some(rt),
        hosts,
        source,
        info,
    }
}

async fn client(r: &Rig) -> P4RuntimeClient<Channel> {
    P4RuntimeClient::connect(format!("http://{}", r.server.local_addr()))
        .await
        .unwrap()
}

struct Stream {
    tx: mpsc::Sender<p4v1::StreamMessageRequest>,
    rx: Streaming<p4v1::StreamMessageResponse>,
}

fn arbitration(election: u64) -> p4v1::StreamMessageRequest {
    p4v1::StreamMessageRequest {
        update: Some(p4v1::stream_message_request::Update::Arbitration(
            p4v1::MasterArbitrationUpdate {
                device_id: 1,
                election_id: Some(p4v1::Uint128 {
                    high: 0,
                    low: election,
                }),
                ..Default::default()
            },
        )),
    }
}

async fn next(s: &mut Stream) -> p4v1::stream_message_response::Update {
    let m = tokio::time::timeout(Duration::from_secs(5), s.rx.next())
        .await
        .expect("no stream message within 5 s")
        .expect("stream closed")
        .expect("stream error");
    m.update.unwrap()
}

/// The status code of the next arbitration answer.
async fn arb_code(s: &mut Stream) -> i32 {
    match next(s).await {
        p4v1::stream_message_response::Update::Arbitration(a) => a.status.unwrap().code,
        other => panic!("expected an arbitration update, got {other:?}"),
    }
}

async fn open(c: &mut P4RuntimeClient<Channel>, election: u64) -> (Stream, i32) {
    let (tx, rx) = mpsc::channel(16);
    tx.send(arbitration(election)).await.unwrap();
    let rx = c
        .stream_channel(ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let mut s = Stream { tx, rx };
    let code = arb_code(&mut s).await;
    (s, code)
}

fn table(info: &pi::P4Info, name: &str) -> pi::Table {
    info.tables
        .iter()
        .find(|t| t.preamble.as_ref().unwrap().name == name)
        .unwrap()
        .clone()
}

fn action_id(info: &pi::P4Info, name: &str) -> u32 {
    info.actions
        .iter()
        .find(|a| a.preamble.as_ref().unwrap().name == name)
        .unwrap()
        .preamble
        .as_ref()
        .unwrap()
        .id
}

fn action(info: &pi::P4Info, name: &str, params: &[&[u8]]) -> Option<p4v1::TableAction> {
    Some(p4v1::TableAction {
        r#type: Some(p4v1::table_action::Type::Action(p4v1::Action {
            action_id: action_id(info, name),
            params: params
                .iter()
                .enumerate()
                .map(|(i, v)| p4v1::action::Param {
                    param_id: i as u32 + 1,
                    value: v.to_vec(),
                })
                .collect(),
        })),
    })
}

fn counter_id(info: &pi::P4Info, name: &str) -> u32 {
    info.counters
        .iter()
        .find(|c| c.preamble.as_ref().unwrap().name == name)
        .unwrap()
        .preamble
        .as_ref()
        .unwrap()
        .id
}

fn fm(id: u32, t: F) -> p4v1::FieldMatch {
    p4v1::FieldMatch {
        field_id: id,
        field_match_type: Some(t),
    }
}

fn mac_entry(info: &pi::P4Info, mac: [u8; 6], port: u8) -> p4v1::TableEntry {
    p4v1::TableEntry {
        table_id: table(info, "SwitchIngress.mac_dst").preamble.unwrap().id,
        r#match: vec![fm(
            1,
            F::Exact(p4v1::field_match::Exact {
                value: mac.to_vec(),
            }),
        )],
        action: action(info, "SwitchIngress.set_port", &[&[port]]),
        ..Default::default()
    }
}

fn update(kind: p4v1::update::Type, e: E) -> p4v1::Update {
    p4v1::Update {
        r#type: kind as i32,
        entity: Some(p4v1::Entity { entity: Some(e) }),
    }
}

fn write(election: u64, updates: Vec<p4v1::Update>) -> p4v1::WriteRequest {
    p4v1::WriteRequest {
        device_id: 1,
        election_id: Some(p4v1::Uint128 {
            high: 0,
            low: election,
        }),
        updates,
        ..Default::default()
    }
}

async fn read(c: &mut P4RuntimeClient<Channel>, e: E) -> Vec<E> {
    let mut s = c
        .read(p4v1::ReadRequest {
            device_id: 1,
            entities: vec![p4v1::Entity { entity: Some(e) }],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    while let Some(r) = s.next().await {
        out.extend(r.unwrap().entities.into_iter().filter_map(|e| e.entity));
    }
    out
}

/// The per-update errors of a failed batch.
fn details(st: &Status) -> Vec<(i32, String)> {
    assert_eq!(st.code(), Code::Unknown, "{st:?}");
    let s = rpc::Status::decode(st.details()).unwrap();
    s.details
        .iter()
        .map(|a| {
            assert_eq!(a.type_url, "type.googleapis.com/p4.v1.Error");
            let e = p4v1::Error::decode(a.value.as_slice()).unwrap();
            (e.canonical_code, e.message)
        })
        .collect()
}

use p4v1::update::Type::{Delete, Insert, Modify};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capabilities_and_arbitration() {
    let r = rig();
    let mut c = client(&r).await;
    let caps = c
        .capabilities(p4v1::CapabilitiesRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(caps.p4runtime_api_version, server::API_VERSION);

    let (mut a, code) = open(&mut c, 10).await;
    assert_eq!(code, Code::Ok as i32, "the first controller is primary");
    let mut c2 = client(&r).await;
    let (b, code) = open(&mut c2, 20).await;
    assert_eq!(code, Code::Ok as i32, "a higher election id takes over");
    assert_eq!(
        arb_code(&mut a).await,
        Code::AlreadyExists as i32,
        "the old primary hears it is a backup"
    );
    let mut c3 = client(&r).await;
    let (_low, code) = open(&mut c3, 5).await;
    assert_eq!(code, Code::AlreadyExists as i32, "a lower one is a backup");

    // Only the primary writes.
    let e = mac_entry(&r.info, [2, 0, 0, 0, 0, 1], 1);
    let st = c
        .write(write(10, vec![update(Insert, E::TableEntry(e.clone()))]))
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::PermissionDenied, "{st:?}");
    let st = c
        .write(p4v1::WriteRequest {
            device_id: 1,
            updates: vec![update(Insert, E::TableEntry(e.clone()))],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::PermissionDenied, "{st:?}");
    c2.write(write(20, vec![update(Insert, E::TableEntry(e.clone()))]))
        .await
        .unwrap();
    // A wrong device id is NOT_FOUND; a used election id is refused on the stream.
    let mut w = write(20, vec![]);
    w.device_id = 7;
    assert_eq!(c2.write(w).await.unwrap_err().code(), Code::NotFound);
    let mut c4 = client(&r).await;
    let (tx, rx) = mpsc::channel(4);
    tx.send(arbitration(20)).await.unwrap();
    let mut dup = c4
        .stream_channel(ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let st = dup.next().await.unwrap().unwrap_err();
    assert_eq!(st.code(), Code::InvalidArgument, "{st:?}");

    // The primary leaves: nobody is promoted; the others hear there is no primary, with
    // the highest election id seen.
    drop(b.tx);
    drop(b.rx);
    let (code, id) = arb_update(&mut a).await;
    assert_eq!(
        (code, id),
        (Code::NotFound as i32, 20),
        "no automatic promotion"
    );
    let st = c
        .write(write(10, vec![update(Delete, E::TableEntry(e.clone()))]))
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::PermissionDenied, "{st:?}");
    // Re-arbitrating below the highest id ever seen keeps a backup; at or above, primary.
    a.tx.send(arbitration(15)).await.unwrap();
    assert_eq!(arb_update(&mut a).await, (Code::NotFound as i32, 20));
    a.tx.send(arbitration(25)).await.unwrap();
    assert_eq!(arb_update(&mut a).await, (Code::Ok as i32, 25));
    c.write(write(25, vec![update(Delete, E::TableEntry(e))]))
        .await
        .unwrap();
}

/// The code and election id of the next arbitration update.
async fn arb_update(s: &mut Stream) -> (i32, u64) {
    match next(s).await {
        p4v1::stream_message_response::Update::Arbitration(a) => {
            (a.status.unwrap().code, a.election_id.unwrap().low)
        }
        other => panic!("expected an arbitration update, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_primary_that_lowers_its_id_leaves_no_primary() {
    let r = rig();
    let mut c = client(&r).await;
    let (mut a, code) = open(&mut c, 10).await;
    assert_eq!(code, Code::Ok as i32);
    let (mut b, code) = open(&mut c, 5).await;
    assert_eq!(code, Code::AlreadyExists as i32);
    a.tx.send(arbitration(3)).await.unwrap();
    assert_eq!(arb_update(&mut a).await, (Code::NotFound as i32, 10));
    assert_eq!(
        arb_update(&mut b).await,
        (Code::NotFound as i32, 10),
        "the backup is told there is no primary, not promoted"
    );
    // Another device id on a stream that has arbitrated ends it with FAILED_PRECONDITION.
    let mut other = arbitration(11);
    if let Some(p4v1::stream_message_request::Update::Arbitration(m)) = &mut other.update {
        m.device_id = 2;
    }
    b.tx.send(other).await.unwrap();
    let st = tokio::time::timeout(Duration::from_secs(5), b.rx.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert_eq!(st.code(), Code::FailedPrecondition, "{st:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_read_round_trip_and_errors() {
    let r = rig();
    let info = &r.info;
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;

    let mac = mac_entry(info, [2, 0, 0, 0, 0, 2], 2);
    let lpm_t = table(info, "SwitchIngress.ipv4_lpm").preamble.unwrap().id;
    let lpm = p4v1::TableEntry {
        table_id: lpm_t,
        r#match: vec![fm(
            1,
            F::Lpm(p4v1::field_match::Lpm {
                value: vec![10, 0, 1, 0],
                prefix_len: 24,
            }),
        )],
        action: action(info, "SwitchIngress.set_nexthop", &[&[7]]),
        ..Default::default()
    };
    let acl_t = table(info, "SwitchIngress.acl");
    let field = |n: &str| acl_t.match_fields.iter().find(|f| f.name == n).unwrap().id;
    let acl = p4v1::TableEntry {
        table_id: acl_t.preamble.as_ref().unwrap().id,
        r#match: vec![
            fm(
                field("hdr.ipv4.dst_addr"),
                F::Ternary(p4v1::field_match::Ternary {
                    value: vec![10, 0, 0, 0],
                    mask: vec![255, 0, 0, 0],
                }),
            ),
            fm(
                field("hdr.l4.dst_port"),
                F::Range(p4v1::field_match::Range {
                    low: vec![0, 22],
                    high: vec![0, 23],
                }),
            ),
        ],
        priority: 10,
        action: action(info, "SwitchIngress.acl_deny", &[]),
        ..Default::default()
    };
    c.write(write(
        1,
        vec![
            update(Insert, E::TableEntry(mac.clone())),
            update(Insert, E::TableEntry(lpm.clone())),
            update(Insert, E::TableEntry(acl.clone())),
        ],
    ))
    .await
    .unwrap();

    // Read back: by table, and every table at once (table id 0).
    let got = read(
        &mut c,
        E::TableEntry(p4v1::TableEntry {
            table_id: lpm_t,
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(got, vec![E::TableEntry(lpm.clone())]);
    let all = read(&mut c, E::TableEntry(p4v1::TableEntry::default())).await;
    for want in [&mac, &lpm] {
        assert!(all.contains(&E::TableEntry(want.clone())), "{all:?}");
    }
    // Reads answer in field order with canonical byte strings (no leading zero bytes).
    let mut acl_back = acl.clone();
    acl_back.r#match.sort_by_key(|m| m.field_id);
    acl_back.r#match[1].field_match_type = Some(F::Range(p4v1::field_match::Range {
        low: vec![22],
        high: vec![23],
    }));
    assert!(all.contains(&E::TableEntry(acl_back)), "{all:?}");
    // A read with a key returns that entry only.
    let one = read(&mut c, E::TableEntry(mac.clone())).await;
    assert_eq!(one, vec![E::TableEntry(mac.clone())]);

    // A batch with errors: each update gets its own status, the good ones are applied.
    let mut bad_width = mac_entry(info, [2, 0, 0, 0, 0, 3], 0);
    if let Some(p4v1::table_action::Type::Action(a)) =
        bad_width.action.as_mut().and_then(|a| a.r#type.as_mut())
    {
        a.params[0].value = vec![4, 0]; // 1024 does not fit a 9-bit port
    }
    let mut unknown = mac.clone();
    unknown.table_id = 0x0200_0001;
    let mut no_exact = mac.clone();
    no_exact.r#match.clear();
    let mut stray_bits = lpm.clone();
    stray_bits.r#match[0].field_match_type = Some(F::Lpm(p4v1::field_match::Lpm {
        value: vec![10, 0, 1, 1],
        prefix_len: 24,
    }));
    let mut no_prio = acl.clone();
    no_prio.priority = 0;
    let new_mac = mac_entry(info, [2, 0, 0, 0, 0, 4], 1);
    let st = c
        .write(write(
            1,
            vec![
                update(Insert, E::TableEntry(mac.clone())),
                update(Delete, E::TableEntry(mac_entry(info, [9; 6], 1))),
                update(Insert, E::TableEntry(bad_width)),
                update(Insert, E::TableEntry(unknown)),
                update(Insert, E::TableEntry(no_exact)),
                update(Insert, E::TableEntry(stray_bits)),
                update(Insert, E::TableEntry(no_prio)),
                update(Insert, E::TableEntry(new_mac.clone())),
            ],
        ))
        .await
        .unwrap_err();
    let codes: Vec<i32> = details(&st).iter().map(|d| d.0).collect();
    assert_eq!(
        codes,
        vec![
            Code::AlreadyExists as i32,
            Code::NotFound as i32,
            Code::InvalidArgument as i32,
            Code::NotFound as i32,
            Code::InvalidArgument as i32,
            Code::InvalidArgument as i32,
            Code::InvalidArgument as i32,
            Code::Ok as i32,
        ],
        "{:?}",
        details(&st)
    );
    assert_eq!(
        read(&mut c, E::TableEntry(new_mac.clone())).await.len(),
        1,
        "the good update of the failed batch was applied"
    );

    // Modify, then delete.
    let mut moved = mac.clone();
    moved.action = action(info, "SwitchIngress.set_port", &[&[1]]);
    c.write(write(1, vec![update(Modify, E::TableEntry(moved.clone()))]))
        .await
        .unwrap();
    assert_eq!(
        read(&mut c, E::TableEntry(mac.clone())).await,
        vec![E::TableEntry(moved)]
    );
    c.write(write(1, vec![update(Delete, E::TableEntry(mac.clone()))]))
        .await
        .unwrap();
    assert!(read(&mut c, E::TableEntry(mac.clone())).await.is_empty());

    // Default actions: modify only, and read back.
    let default = p4v1::TableEntry {
        table_id: table(info, "SwitchIngress.mac_dst").preamble.unwrap().id,
        is_default_action: true,
        action: action(info, "SwitchIngress.drop", &[]),
        ..Default::default()
    };
    c.write(write(
        1,
        vec![update(Modify, E::TableEntry(default.clone()))],
    ))
    .await
    .unwrap();
    assert_eq!(
        read(
            &mut c,
            E::TableEntry(p4v1::TableEntry {
                table_id: default.table_id,
                is_default_action: true,
                ..Default::default()
            })
        )
        .await,
        vec![E::TableEntry(default.clone())]
    );
    let st = c
        .write(write(
            1,
            vec![update(Insert, E::TableEntry(default.clone()))],
        ))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::InvalidArgument as i32);
    // A MODIFY of the default entry without an action puts back the program's default.
    let reset = p4v1::TableEntry {
        action: None,
        ..default.clone()
    };
    c.write(write(1, vec![update(Modify, E::TableEntry(reset.clone()))]))
        .await
        .unwrap();
    assert_eq!(
        read(&mut c, E::TableEntry(reset)).await,
        vec![E::TableEntry(p4v1::TableEntry {
            action: action(info, "SwitchIngress.flood", &[&[1]]),
            ..default
        })]
    );

    // Multicast groups and clone sessions.
    use p4v1::packet_replication_engine_entry::Type as Pre;
    let group = E::PacketReplicationEngineEntry(p4v1::PacketReplicationEngineEntry {
        r#type: Some(Pre::MulticastGroupEntry(p4v1::MulticastGroupEntry {
            multicast_group_id: 5,
            replicas: vec![
                p4v1::Replica {
                    egress_port: 1,
                    instance: 0,
                    ..Default::default()
                },
                p4v1::Replica {
                    egress_port: 2,
                    instance: 0,
                    ..Default::default()
                },
            ],
            ..Default::default()
        })),
    });
    let clone = E::PacketReplicationEngineEntry(p4v1::PacketReplicationEngineEntry {
        r#type: Some(Pre::CloneSessionEntry(p4v1::CloneSessionEntry {
            session_id: 9,
            replicas: vec![p4v1::Replica {
                egress_port: 2,
                instance: 0,
                ..Default::default()
            }],
            class_of_service: 0,
            packet_length_bytes: 128,
        })),
    });
    c.write(write(
        1,
        vec![update(Insert, group.clone()), update(Insert, clone.clone())],
    ))
    .await
    .unwrap();
    let wild_group = E::PacketReplicationEngineEntry(p4v1::PacketReplicationEngineEntry {
        r#type: Some(Pre::MulticastGroupEntry(Default::default())),
    });
    assert_eq!(read(&mut c, wild_group).await, vec![group.clone()]);
    let wild_clone = E::PacketReplicationEngineEntry(p4v1::PacketReplicationEngineEntry {
        r#type: Some(Pre::CloneSessionEntry(Default::default())),
    });
    assert_eq!(read(&mut c, wild_clone).await, vec![clone]);
    let st = c
        .write(write(1, vec![update(Insert, group)]))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::AlreadyExists as i32);
    // Replicas are unique; the 1.4 bytestring `port` is a port; a group's metadata and a
    // session's class of service read back.
    let pre_group = |id: u32, replicas: Vec<p4v1::Replica>, metadata: &[u8]| {
        E::PacketReplicationEngineEntry(p4v1::PacketReplicationEngineEntry {
            r#type: Some(Pre::MulticastGroupEntry(p4v1::MulticastGroupEntry {
                multicast_group_id: id,
                replicas,
                metadata: metadata.to_vec(),
            })),
        })
    };
    let rep = |egress_port: u32, port: &[u8]| p4v1::Replica {
        egress_port,
        port: port.to_vec(),
        instance: 0,
    };
    let st = c
        .write(write(
            1,
            vec![update(
                Insert,
                pre_group(6, vec![rep(1, b""), rep(1, b"")], b""),
            )],
        ))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::InvalidArgument as i32, "{st:?}");
    c.write(write(
        1,
        vec![update(
            Insert,
            pre_group(7, vec![rep(0, &[1]), rep(0, &[0, 2])], b"cookie"),
        )],
    ))
    .await
    .unwrap();
    assert_eq!(
        read(&mut c, pre_group(7, vec![], b"")).await,
        vec![pre_group(7, vec![rep(1, b""), rep(2, b"")], b"cookie")]
    );
    let cos = E::PacketReplicationEngineEntry(p4v1::PacketReplicationEngineEntry {
        r#type: Some(Pre::CloneSessionEntry(p4v1::CloneSessionEntry {
            session_id: 10,
            replicas: vec![rep(2, b"")],
            class_of_service: 1,
            packet_length_bytes: 0,
        })),
    });
    c.write(write(1, vec![update(Insert, cos.clone())]))
        .await
        .unwrap();
    let one_clone = E::PacketReplicationEngineEntry(p4v1::PacketReplicationEngineEntry {
        r#type: Some(Pre::CloneSessionEntry(p4v1::CloneSessionEntry {
            session_id: 10,
            ..Default::default()
        })),
    });
    assert_eq!(read(&mut c, one_clone).await, vec![cos]);

    // Unknown ids in reads are NOT_FOUND.
    let st = c
        .read(p4v1::ReadRequest {
            device_id: 1,
            entities: vec![p4v1::Entity {
                entity: Some(E::CounterEntry(p4v1::CounterEntry {
                    counter_id: 0x1200_0001,
                    ..Default::default()
                })),
            }],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::NotFound);
}

fn frame(dst: [u8; 6]) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend_from_slice(&[2, 0, 0, 0, 0, 0x99, 0x88, 0xb5]);
    f.extend_from_slice(&[0x5a; 50]);
    f
}

fn send(p: &mut MemPort, f: &[u8]) {
    let mut b = FrameBatch::new(1);
    b.push(f, Nanos(0));
    assert_eq!(p.send_batch(&mut b, Nanos(0)).unwrap(), 1);
}

fn recv(p: &mut MemPort) -> Vec<u8> {
    let mut b = FrameBatch::new(1);
    for _ in 0..500 {
        if p.recv_batch(&mut b, Nanos(0)).unwrap() > 0 {
            return b.frames()[0].data.clone();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no frame within 5 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packet_io_counters_and_pipeline_config() {
    let mut r = rig();
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (mut s, _) = open(&mut c, 1).await;

    // A MAC to the CPU port and one to port 2.
    let to_cpu = [2, 0, 0, 0, 0, 0x64];
    let to_2 = [2, 0, 0, 0, 0, 0x02];
    c.write(write(
        1,
        vec![
            update(Insert, E::TableEntry(mac_entry(&info, to_cpu, 64))),
            update(Insert, E::TableEntry(mac_entry(&info, to_2, 2))),
        ],
    ))
    .await
    .unwrap();

    // Packet-out enters on the CPU port and is forwarded to port 2.
    let out = frame(to_2);
    s.tx.send(p4v1::StreamMessageRequest {
        update: Some(p4v1::stream_message_request::Update::Packet(
            p4v1::PacketOut {
                payload: out.clone(),
                metadata: vec![],
            },
        )),
    })
    .await
    .unwrap();
    let got = recv(&mut r.hosts[1]);
    assert_eq!(&got[..6], &to_2);
    // A frame from port 1 to the CPU's MAC becomes a packet-in.
    let inb = frame(to_cpu);
    send(&mut r.hosts[0], &inb);
    match next(&mut s).await {
        p4v1::stream_message_response::Update::Packet(p) => {
            assert_eq!(&p.payload[..6], &to_cpu);
            assert_eq!(p.payload.len(), inb.len());
        }
        other => panic!("expected a packet-in, got {other:?}"),
    }
    // Packet-out metadata on a program without a packet_out header is refused on the stream.
    s.tx.send(p4v1::StreamMessageRequest {
        update: Some(p4v1::stream_message_request::Update::Packet(
            p4v1::PacketOut {
                payload: out.clone(),
                metadata: vec![p4v1::PacketMetadata {
                    metadata_id: 1,
                    value: vec![1],
                }],
            },
        )),
    })
    .await
    .unwrap();
    match next(&mut s).await {
        p4v1::stream_message_response::Update::Error(e) => {
            assert_eq!(e.canonical_code, Code::InvalidArgument as i32)
        }
        other => panic!("expected a stream error, got {other:?}"),
    }
    // A packet-out longer than the largest frame is refused with the reason.
    let mut long = out.clone();
    long.resize(dataplane::port::MAX_FRAME_LEN + 1, 0);
    s.tx.send(p4v1::StreamMessageRequest {
        update: Some(p4v1::stream_message_request::Update::Packet(
            p4v1::PacketOut {
                payload: long,
                metadata: vec![],
            },
        )),
    })
    .await
    .unwrap();
    match next(&mut s).await {
        p4v1::stream_message_response::Update::Error(e) => {
            assert_eq!(e.canonical_code, Code::InvalidArgument as i32);
            assert!(
                e.message.contains("longer than the largest frame"),
                "{}",
                e.message
            );
        }
        other => panic!("expected a stream error, got {other:?}"),
    }

    // Counters: the port counter saw port 1's and the CPU port's frames.
    let ctr = counter_id(&info, "SwitchIngress.ingress_port_counter");
    let cell = |i: i64| {
        E::CounterEntry(p4v1::CounterEntry {
            counter_id: ctr,
            index: Some(p4v1::Index { index: i }),
            data: None,
        })
    };
    for port in [1, 64] {
        match &read(&mut c, cell(port)).await[..] {
            [E::CounterEntry(e)] => {
                assert_eq!(e.data.as_ref().unwrap().packet_count, 1, "port {port}")
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        read(
            &mut c,
            E::CounterEntry(p4v1::CounterEntry {
                counter_id: ctr,
                ..Default::default()
            })
        )
        .await
        .len(),
        512,
        "a wildcard index reads every cell"
    );

    // Pipeline config: GET gives back what pisa generated; RECONCILE with the same program
    // keeps the entries; VERIFY_AND_COMMIT starts from empty tables.
    let got = c
        .get_forwarding_pipeline_config(p4v1::GetForwardingPipelineConfigRequest {
            device_id: 1,
            response_type: 0,
        })
        .await
        .unwrap()
        .into_inner()
        .config
        .unwrap();
    assert_eq!(got.p4info.as_ref(), Some(&info));
    assert_eq!(got.p4_device_config, r.source.as_bytes());
    use p4v1::set_forwarding_pipeline_config_request::Action as A;
    let set = |action: A, cfg: p4v1::ForwardingPipelineConfig, election: u64| {
        p4v1::SetForwardingPipelineConfigRequest {
            device_id: 1,
            election_id: Some(p4v1::Uint128 {
                high: 0,
                low: election,
            }),
            action: action as i32,
            config: Some(cfg),
            ..Default::default()
        }
    };
    let mac_t = table(&info, "SwitchIngress.mac_dst").preamble.unwrap().id;
    let entries = |c: &mut P4RuntimeClient<Channel>| {
        let mut c = c.clone();
        async move {
            read(
                &mut c,
                E::TableEntry(p4v1::TableEntry {
                    table_id: mac_t,
                    ..Default::default()
                }),
            )
            .await
            .len()
        }
    };
    c.set_forwarding_pipeline_config(set(A::ReconcileAndCommit, got.clone(), 1))
        .await
        .unwrap();
    assert_eq!(entries(&mut c).await, 2);
    // A changed program (a table resized) keeps the entries of the tables it still has.
    let mut changed = got.clone();
    changed.p4info = None;
    changed.p4_device_config = r
        .source
        .replacen("size = 4096;", "size = 2048;", 1)
        .into_bytes();
    assert_ne!(changed.p4_device_config, got.p4_device_config);
    c.set_forwarding_pipeline_config(set(A::ReconcileAndCommit, changed, 1))
        .await
        .unwrap();
    assert_eq!(entries(&mut c).await, 2);
    c.set_forwarding_pipeline_config(set(A::ReconcileAndCommit, got.clone(), 1))
        .await
        .unwrap();
    let st = c
        .set_forwarding_pipeline_config(set(A::VerifyAndCommit, got.clone(), 2))
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::PermissionDenied);
    let mut bad = got.clone();
    bad.p4_device_config = b"control nope(".to_vec();
    let st = c
        .set_forwarding_pipeline_config(set(A::Verify, bad, 1))
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::InvalidArgument);
    // A config over the source size `pisa check` reads is refused before it is compiled (60 MB
    // of `;` once took the switch's process down).
    let mut huge = got.clone();
    huge.p4_device_config
        .resize(p4::source::MAX_SOURCE_BYTES as usize + 1, b';');
    let st = c
        .set_forwarding_pipeline_config(set(A::Verify, huge, 1))
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::InvalidArgument);
    assert!(st.message().contains("is too large"), "{st:?}");
    let mut other_info = got.clone();
    other_info.p4info.as_mut().unwrap().tables[0]
        .preamble
        .as_mut()
        .unwrap()
        .id ^= 1;
    let st = c
        .set_forwarding_pipeline_config(set(A::Verify, other_info, 1))
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::InvalidArgument, "{st:?}");
    // A P4Info that lists fewer externs (as one listing TNA registers as Tofino externs) is
    // accepted; the tables and actions must be the same.
    let mut fewer = got.clone();
    fewer.p4info.as_mut().unwrap().counters.clear();
    c.set_forwarding_pipeline_config(set(A::Verify, fewer, 1))
        .await
        .unwrap();
    c.set_forwarding_pipeline_config(set(A::VerifyAndCommit, got.clone(), 1))
        .await
        .unwrap();
    assert_eq!(entries(&mut c).await, 0);
    let commit = p4v1::SetForwardingPipelineConfigRequest {
        config: None,
        ..set(A::Commit, got.clone(), 1)
    };
    let st = c
        .set_forwarding_pipeline_config(commit.clone())
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::FailedPrecondition, "nothing saved");
    // COMMIT takes no config; a write between VERIFY_AND_SAVE and COMMIT goes to the saved
    // config's state, which COMMIT starts the program with (spec: COMMIT replays the writes
    // made since the save).
    c.set_forwarding_pipeline_config(set(A::VerifyAndSave, got.clone(), 1))
        .await
        .unwrap();
    let st = c
        .set_forwarding_pipeline_config(set(A::Commit, got.clone(), 1))
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::InvalidArgument, "COMMIT with a config");
    let e = mac_entry(&info, [2, 0, 0, 0, 0, 7], 1);
    c.write(write(1, vec![update(Insert, E::TableEntry(e.clone()))]))
        .await
        .unwrap();
    assert_eq!(entries(&mut c).await, 1);
    c.set_forwarding_pipeline_config(commit).await.unwrap();
    assert_eq!(entries(&mut c).await, 1);
    let st = c
        .write(write(1, vec![update(Insert, E::TableEntry(e))]))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::AlreadyExists as i32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packet_io_with_controller_headers() {
    let mut r = rig_of(compiled("tests/data/cpu_punt.p4"));
    let info = r.info.clone();
    let header = |name: &str| {
        info.controller_packet_metadata
            .iter()
            .find(|h| h.preamble.as_ref().unwrap().name == name)
            .unwrap()
            .clone()
    };
    assert_eq!(header("packet_in").metadata[0].name, "ingress_port");
    let out_port_id = header("packet_out").metadata[0].id;
    let mut c = client(&r).await;
    let (mut s, _) = open(&mut c, 1).await;

    // Packet-out with egress_port = 2: the program strips the header and sends the frame there.
    let f = frame([2, 0, 0, 0, 0, 7]);
    s.tx.send(p4v1::StreamMessageRequest {
        update: Some(p4v1::stream_message_request::Update::Packet(
            p4v1::PacketOut {
                payload: f.clone(),
                metadata: vec![p4v1::PacketMetadata {
                    metadata_id: out_port_id,
                    value: vec![2],
                }],
            },
        )),
    })
    .await
    .unwrap();
    assert_eq!(recv(&mut r.hosts[1]), f);

    // A punt entry for the frame's EtherType: the frame from port 1 arrives as a packet-in
    // whose metadata names port 1, the packet_in header stripped.
    let punt = table(&info, "Ig.punt");
    let entry = p4v1::TableEntry {
        table_id: punt.preamble.unwrap().id,
        r#match: vec![fm(
            1,
            F::Exact(p4v1::field_match::Exact {
                value: vec![0x88, 0xb5],
            }),
        )],
        action: action(&info, "Ig.to_cpu", &[]),
        ..Default::default()
    };
    c.write(write(1, vec![update(Insert, E::TableEntry(entry))]))
        .await
        .unwrap();
    send(&mut r.hosts[0], &f);
    match next(&mut s).await {
        p4v1::stream_message_response::Update::Packet(p) => {
            assert_eq!(p.payload, f);
            let port = p
                .metadata
                .iter()
                .find(|m| m.metadata_id == header("packet_in").metadata[0].id)
                .unwrap();
            assert_eq!(port.value, vec![1], "canonical (shortest) bytestring");
        }
        other => panic!("expected a packet-in, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn action_profile_members_groups_and_entries() {
    let r = rig_of(compiled("../p4/programs/switch.p4"));
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let prof = &info.action_profiles[0];
    let pid = prof.preamble.as_ref().unwrap().id;
    let ecmp = table(&info, "SwitchIngress.ecmp");
    assert_eq!(prof.table_ids, vec![ecmp.preamble.as_ref().unwrap().id]);
    assert_eq!(ecmp.implementation_id, pid);
    let set_nexthop = action(&info, "SwitchIngress.set_nexthop", &[&[11]]);
    let Some(p4v1::table_action::Type::Action(a)) = set_nexthop.unwrap().r#type else {
        unreachable!()
    };
    let member = |id: u32, nh: u8| {
        let mut a = a.clone();
        a.params[0].value = vec![nh];
        E::ActionProfileMember(p4v1::ActionProfileMember {
            action_profile_id: pid,
            member_id: id,
            action: Some(a),
        })
    };
    let group = E::ActionProfileGroup(p4v1::ActionProfileGroup {
        action_profile_id: pid,
        group_id: 1,
        members: [1, 2]
            .map(|m| p4v1::action_profile_group::Member {
                member_id: m,
                weight: 1,
                watch_kind: None,
            })
            .to_vec(),
        max_size: 0,
    });
    let entry = p4v1::TableEntry {
        table_id: ecmp.preamble.as_ref().unwrap().id,
        r#match: vec![fm(1, F::Exact(p4v1::field_match::Exact { value: vec![1] }))],
        action: Some(p4v1::TableAction {
            r#type: Some(p4v1::table_action::Type::ActionProfileGroupId(1)),
        }),
        ..Default::default()
    };
    c.write(write(
        1,
        vec![
            update(Insert, member(1, 11)),
            update(Insert, member(2, 12)),
            update(Insert, group.clone()),
            update(Insert, E::TableEntry(entry.clone())),
        ],
    ))
    .await
    .unwrap();
    let wild_members = E::ActionProfileMember(p4v1::ActionProfileMember {
        action_profile_id: pid,
        ..Default::default()
    });
    assert_eq!(
        read(&mut c, wild_members).await,
        vec![member(1, 11), member(2, 12)]
    );
    let wild_groups = E::ActionProfileGroup(p4v1::ActionProfileGroup {
        action_profile_id: pid,
        ..Default::default()
    });
    assert_eq!(read(&mut c, wild_groups).await, vec![group]);
    assert_eq!(
        read(&mut c, E::TableEntry(entry.clone())).await,
        vec![E::TableEntry(entry.clone())]
    );
    // A member in use, a duplicate member, a plain action on a profile table.
    let mut plain = entry.clone();
    plain.r#match[0].field_match_type = Some(F::Exact(p4v1::field_match::Exact { value: vec![2] }));
    plain.action = action(&info, "SwitchIngress.set_nexthop", &[&[1]]);
    let st = c
        .write(write(
            1,
            vec![
                update(Delete, member(1, 11)),
                update(Insert, member(2, 12)),
                update(Modify, member(3, 13)),
                update(Insert, E::TableEntry(plain)),
            ],
        ))
        .await
        .unwrap_err();
    let codes: Vec<i32> = details(&st).iter().map(|d| d.0).collect();
    assert_eq!(
        codes,
        vec![
            Code::FailedPrecondition as i32,
            Code::AlreadyExists as i32,
            Code::NotFound as i32,
            Code::InvalidArgument as i32
        ],
        "{:?}",
        details(&st)
    );
    // Group sizes: max_size at most the profile's max_group_size, members within it, kept
    // and read back, and a MODIFY may not change it. The default of a table with an action
    // profile is fixed.
    let sized = |id: u32, members: &[u32], max_size: i32| {
        E::ActionProfileGroup(p4v1::ActionProfileGroup {
            action_profile_id: pid,
            group_id: id,
            members: members
                .iter()
                .map(|&m| p4v1::action_profile_group::Member {
                    member_id: m,
                    weight: 1,
                    watch_kind: None,
                })
                .collect(),
            max_size,
        })
    };
    assert!(prof.max_group_size > 0);
    let ecmp_default = p4v1::TableEntry {
        table_id: ecmp.preamble.as_ref().unwrap().id,
        is_default_action: true,
        action: action(&info, "SwitchIngress.set_nexthop", &[&[1]]),
        ..Default::default()
    };
    let st = c
        .write(write(
            1,
            vec![
                update(Insert, sized(2, &[1], prof.max_group_size + 1)),
                update(Insert, sized(3, &[1, 2], 1)),
                update(Insert, sized(4, &[1], 2)),
                update(Modify, E::TableEntry(ecmp_default)),
            ],
        ))
        .await
        .unwrap_err();
    let codes: Vec<i32> = details(&st).iter().map(|d| d.0).collect();
    assert_eq!(
        codes,
        vec![
            Code::InvalidArgument as i32,
            Code::ResourceExhausted as i32,
            Code::Ok as i32,
            Code::PermissionDenied as i32
        ],
        "{:?}",
        details(&st)
    );
    let one_group = E::ActionProfileGroup(p4v1::ActionProfileGroup {
        action_profile_id: pid,
        group_id: 4,
        ..Default::default()
    });
    assert_eq!(
        read(&mut c, one_group.clone()).await,
        vec![sized(4, &[1], 2)]
    );
    let st = c
        .write(write(1, vec![update(Modify, sized(4, &[1, 2], 3))]))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::InvalidArgument as i32, "{st:?}");
    c.write(write(1, vec![update(Modify, sized(4, &[1, 2], 2))]))
        .await
        .unwrap();
    assert_eq!(read(&mut c, one_group).await, vec![sized(4, &[1, 2], 2)]);
    c.write(write(1, vec![update(Delete, sized(4, &[], 2))]))
        .await
        .unwrap();

    // Meters: a cell configured; an index out of range and a peak below the committed rate
    // refused.
    let meter_id = info.meters[0].preamble.as_ref().unwrap().id;
    let meter = |index: i64, cir: i64, pir: i64| {
        E::MeterEntry(p4v1::MeterEntry {
            meter_id,
            index: Some(p4v1::Index { index }),
            config: Some(p4v1::MeterConfig {
                cir,
                cburst: 10,
                pir,
                pburst: 20,
            }),
        })
    };
    let st = c
        .write(write(
            1,
            vec![
                update(Modify, meter(1, 100, 200)),
                update(Modify, meter(512, 100, 200)),
                update(Modify, meter(2, 300, 200)),
                update(Insert, meter(3, 100, 200)),
            ],
        ))
        .await
        .unwrap_err();
    let codes: Vec<i32> = details(&st).iter().map(|d| d.0).collect();
    assert_eq!(
        codes,
        vec![
            Code::Ok as i32,
            Code::OutOfRange as i32,
            Code::InvalidArgument as i32,
            Code::InvalidArgument as i32
        ],
        "{:?}",
        details(&st)
    );
    // Configurations read back: the written cell as written, the others unconfigured; a
    // MODIFY without a config takes the cell back to unconfigured.
    let cell = |index: i64| {
        E::MeterEntry(p4v1::MeterEntry {
            meter_id,
            index: Some(p4v1::Index { index }),
            config: None,
        })
    };
    assert_eq!(read(&mut c, cell(1)).await, vec![meter(1, 100, 200)]);
    assert_eq!(read(&mut c, cell(2)).await, vec![cell(2)]);
    let all = read(
        &mut c,
        E::MeterEntry(p4v1::MeterEntry {
            meter_id,
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(all.len() as i64, info.meters[0].size);
    c.write(write(1, vec![update(Modify, cell(1))]))
        .await
        .unwrap();
    assert_eq!(read(&mut c, cell(1)).await, vec![cell(1)]);
}

/// The hidden groups of `profile` on the switch: per group, its members' first parameter.
fn switch_groups(r: &Rig, profile: &str) -> Vec<Vec<u8>> {
    let profile = profile.to_string();
    let views =
        r.rt.as_ref()
            .unwrap()
            .handle()
            .each(Duration::from_secs(5), move |sw, _| {
                sw.profile_read(pipeline::api::PipeSel::All, &profile)
                    .unwrap()
            })
            .unwrap();
    let v = &views[0];
    v.groups
        .iter()
        .map(|(_, members)| {
            members
                .iter()
                .map(|m| {
                    let (_, _, params) = v.members.iter().find(|x| x.0 == *m).unwrap();
                    params[0].1 as u8
                })
                .collect()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_shot_action_sets_make_hidden_groups() {
    let r = rig_of(compiled("../p4/programs/switch.p4"));
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let prof = &info.action_profiles[0];
    let pname = prof.preamble.as_ref().unwrap().name.clone();
    let pid = prof.preamble.as_ref().unwrap().id;
    let ecmp = table(&info, "SwitchIngress.ecmp");
    let Some(p4v1::table_action::Type::Action(nh)) =
        action(&info, "SwitchIngress.set_nexthop", &[&[11]])
            .unwrap()
            .r#type
    else {
        unreachable!()
    };
    let act = |v: u8, weight: i32| p4v1::ActionProfileAction {
        action: Some(p4v1::Action {
            params: vec![p4v1::action::Param {
                value: vec![v],
                ..nh.params[0].clone()
            }],
            ..nh.clone()
        }),
        weight,
        watch_kind: None,
    };
    let entry = |key: u8, acts: Vec<p4v1::ActionProfileAction>| p4v1::TableEntry {
        table_id: ecmp.preamble.as_ref().unwrap().id,
        r#match: vec![fm(
            1,
            F::Exact(p4v1::field_match::Exact { value: vec![key] }),
        )],
        action: Some(p4v1::TableAction {
            r#type: Some(p4v1::table_action::Type::ActionProfileActionSet(
                p4v1::ActionProfileActionSet {
                    action_profile_actions: acts,
                },
            )),
        }),
        ..Default::default()
    };
    // An action of weight 2 is two members of the group made for the entry.
    let e1 = entry(1, vec![act(11, 2), act(12, 1)]);
    c.write(write(1, vec![update(Insert, E::TableEntry(e1.clone()))]))
        .await
        .unwrap();
    assert_eq!(switch_groups(&r, &pname), vec![vec![11, 11, 12]]);
    assert_eq!(
        read(&mut c, E::TableEntry(e1.clone())).await,
        vec![E::TableEntry(e1.clone())]
    );
    // The server's members and groups are not shown, and the client cannot write its own.
    let wild = E::ActionProfileMember(p4v1::ActionProfileMember {
        action_profile_id: pid,
        ..Default::default()
    });
    assert_eq!(read(&mut c, wild).await, vec![]);
    let member = E::ActionProfileMember(p4v1::ActionProfileMember {
        action_profile_id: pid,
        member_id: 1,
        action: Some(nh.clone()),
    });
    // Refused: a member of the one-shot profile, a zero weight, weights over the selector's
    // max_group_size, an empty set, a watch port.
    let mut watched = act(13, 1);
    watched.watch_kind = Some(p4v1::action_profile_action::WatchKind::WatchPort(vec![1]));
    let over = prof.max_group_size + 1;
    let st = c
        .write(write(
            1,
            vec![
                update(Insert, member.clone()),
                update(Insert, E::TableEntry(entry(2, vec![act(13, 0)]))),
                update(Insert, E::TableEntry(entry(3, vec![act(13, over)]))),
                update(Insert, E::TableEntry(entry(4, vec![]))),
                update(Insert, E::TableEntry(entry(5, vec![watched]))),
            ],
        ))
        .await
        .unwrap_err();
    let codes: Vec<i32> = details(&st).iter().map(|d| d.0).collect();
    assert_eq!(
        codes,
        vec![
            Code::InvalidArgument as i32,
            Code::InvalidArgument as i32,
            Code::InvalidArgument as i32,
            Code::InvalidArgument as i32,
            Code::Unimplemented as i32
        ],
        "{:?}",
        details(&st)
    );
    // A second insert of the same key fails and leaves no group behind; a MODIFY replaces
    // the group; a DELETE removes the entry and its group.
    let st = c
        .write(write(
            1,
            vec![update(Insert, E::TableEntry(entry(1, vec![act(14, 1)])))],
        ))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::AlreadyExists as i32, "{st:?}");
    assert_eq!(switch_groups(&r, &pname), vec![vec![11, 11, 12]]);
    let e1b = entry(1, vec![act(15, 1), act(16, 1)]);
    c.write(write(1, vec![update(Modify, E::TableEntry(e1b.clone()))]))
        .await
        .unwrap();
    assert_eq!(switch_groups(&r, &pname), vec![vec![15, 16]]);
    assert_eq!(
        read(&mut c, E::TableEntry(e1.clone())).await,
        vec![E::TableEntry(e1b.clone())]
    );
    c.write(write(1, vec![update(Delete, E::TableEntry(e1b))]))
        .await
        .unwrap();
    assert_eq!(switch_groups(&r, &pname), Vec::<Vec<u8>>::new());
    // With no one-shot entry left, the profile takes members again, and then no action sets.
    c.write(write(1, vec![update(Insert, member)]))
        .await
        .unwrap();
    let st = c
        .write(write(1, vec![update(Insert, E::TableEntry(e1))]))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::InvalidArgument as i32, "{st:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn digests_reach_the_primary() {
    let mut r = rig_of(compiled("../p4/programs/switch.p4"));
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (mut s, _) = open(&mut c, 1).await;
    let d = &info.digests[0];
    let id = d.preamble.as_ref().unwrap().id;
    assert_eq!(
        d.preamble.as_ref().unwrap().name,
        "SwitchIngressDeparser.learn_digest"
    );
    let entry = E::DigestEntry(p4v1::DigestEntry {
        digest_id: id,
        config: Some(p4v1::digest_entry::Config {
            max_timeout_ns: 0,
            max_list_size: 1,
            ack_timeout_ns: 10_000_000_000,
        }),
    });
    c.write(write(1, vec![update(Insert, entry.clone())]))
        .await
        .unwrap();
    let st = c
        .write(write(1, vec![update(Insert, entry.clone())]))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::AlreadyExists as i32);
    assert_eq!(
        read(
            &mut c,
            E::DigestEntry(p4v1::DigestEntry {
                digest_id: 0,
                config: None
            })
        )
        .await,
        vec![entry]
    );
    // An unknown source MAC on port 1: switch.p4 learns it through the digest.
    let mut f = frame([2, 0, 0, 0, 0, 9]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 0x42]);
    send(&mut r.hosts[0], &f);
    match next(&mut s).await {
        p4v1::stream_message_response::Update::Digest(l) => {
            assert_eq!(l.digest_id, id);
            assert_eq!(l.data.len(), 1);
            let Some(p4v1::p4_data::Data::Struct(st)) = &l.data[0].data else {
                panic!("{l:?}")
            };
            let fields: Vec<_> = st
                .members
                .iter()
                .map(|m| match &m.data {
                    Some(p4v1::p4_data::Data::Bitstring(b)) => b.clone(),
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_eq!(fields[1], vec![2, 0, 0, 0, 0, 0x42], "the source MAC");
            assert_eq!(fields[2], vec![1], "the ingress port");
            // The same data is not sent again before the ack (or the 10 s ack timeout).
            send(&mut r.hosts[0], &f);
            let again = tokio::time::timeout(Duration::from_millis(300), s.rx.next()).await;
            assert!(again.is_err(), "a duplicate before the ack: {again:?}");
            s.tx.send(p4v1::StreamMessageRequest {
                update: Some(p4v1::stream_message_request::Update::DigestAck(
                    p4v1::DigestListAck {
                        digest_id: id,
                        list_id: l.list_id,
                    },
                )),
            })
            .await
            .unwrap();
        }
        other => panic!("expected a digest list, got {other:?}"),
    }
    // Acked: the same data may come again.
    tokio::time::sleep(Duration::from_millis(100)).await;
    send(&mut r.hosts[0], &f);
    match next(&mut s).await {
        p4v1::stream_message_response::Update::Digest(l) => assert_eq!(l.digest_id, id),
        other => panic!("expected a digest list, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_reach_every_pipe_thread_and_counters_sum_over_them() {
    // Ports on pipes 0 and 1, one thread (and switch instance) per pipe.
    let mut r = rig_on(l2l3(), &[1, 129], true);
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let to_1 = [2, 0, 0, 0, 0, 1];
    let to_129 = [2, 0, 0, 0, 0, 0x81];
    c.write(write(
        1,
        vec![
            update(Insert, E::TableEntry(mac_entry(&info, to_1, 1))),
            update(Insert, E::TableEntry(mac_entry_port(&info, to_129, 129))),
        ],
    ))
    .await
    .unwrap();
    // Each pipe's thread has the entries: frames cross between the pipes both ways.
    send(&mut r.hosts[0], &frame(to_129));
    assert_eq!(&recv(&mut r.hosts[1])[..6], &to_129);
    send(&mut r.hosts[1], &frame(to_1));
    assert_eq!(&recv(&mut r.hosts[0])[..6], &to_1);
    // Counter cells are summed over the instances that own the pipes.
    let ctr = counter_id(&info, "SwitchIngress.ingress_port_counter");
    for port in [1i64, 129] {
        let got = read(
            &mut c,
            E::CounterEntry(p4v1::CounterEntry {
                counter_id: ctr,
                index: Some(p4v1::Index { index: port }),
                data: None,
            }),
        )
        .await;
        match &got[..] {
            [E::CounterEntry(e)] => {
                assert_eq!(e.data.as_ref().unwrap().packet_count, 1, "port {port}")
            }
            other => panic!("{other:?}"),
        }
    }
    // A written counter value reads back as written, not once per pipe.
    let cell = |index: i64, data: Option<p4v1::CounterData>| {
        E::CounterEntry(p4v1::CounterEntry {
            counter_id: ctr,
            index: Some(p4v1::Index { index }),
            data,
        })
    };
    let data = p4v1::CounterData {
        byte_count: 6400,
        packet_count: 100,
    };
    c.write(write(1, vec![update(Modify, cell(129, Some(data)))]))
        .await
        .unwrap();
    assert_eq!(
        read(&mut c, cell(129, None)).await,
        vec![cell(129, Some(data))]
    );
    let st = c
        .write(write(1, vec![update(Insert, cell(1, Some(data)))]))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::InvalidArgument as i32);
    // Entries read back once, not once per instance.
    let mac_t = table(&info, "SwitchIngress.mac_dst").preamble.unwrap().id;
    let entries = read(
        &mut c,
        E::TableEntry(p4v1::TableEntry {
            table_id: mac_t,
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(entries.len(), 2);
}

fn mac_entry_port(info: &pi::P4Info, mac: [u8; 6], port: u16) -> p4v1::TableEntry {
    let mut e = mac_entry(info, mac, 0);
    if let Some(p4v1::table_action::Type::Action(a)) =
        e.action.as_mut().and_then(|a| a.r#type.as_mut())
    {
        a.params[0].value = port.to_be_bytes().to_vec();
    }
    e
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_cells_write_and_read_back() {
    let r = rig_of(compiled("../p4/programs/p4ce.p4"));
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let reg = info
        .registers
        .iter()
        .find(|g| g.preamble.as_ref().unwrap().name == "SwitchIngress.credit0")
        .unwrap();
    let id = reg.preamble.as_ref().unwrap().id;
    let cell = |index: i64, v: Option<Vec<u8>>| {
        E::RegisterEntry(p4v1::RegisterEntry {
            register_id: id,
            index: Some(p4v1::Index { index }),
            data: v.map(|b| p4v1::P4Data {
                data: Some(p4v1::p4_data::Data::Bitstring(b)),
            }),
        })
    };
    c.write(write(1, vec![update(Modify, cell(5, Some(vec![42])))]))
        .await
        .unwrap();
    assert_eq!(
        read(&mut c, cell(5, None)).await,
        vec![cell(5, Some(vec![42]))]
    );
    // A wildcard index reads every cell; wrong widths, indexes and update types are refused.
    let all = read(
        &mut c,
        E::RegisterEntry(p4v1::RegisterEntry {
            register_id: id,
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(all.len(), reg.size as usize);
    let st = c
        .write(write(
            1,
            vec![
                update(Modify, cell(5, Some(vec![1, 0]))),
                update(Modify, cell(256, Some(vec![1]))),
                update(Insert, cell(1, Some(vec![1]))),
                update(Modify, cell(-1, Some(vec![1]))),
            ],
        ))
        .await
        .unwrap_err();
    let codes: Vec<i32> = details(&st).iter().map(|d| d.0).collect();
    // A negative index is INVALID_ARGUMENT (the spec's RegisterEntry), one past the end
    // OUT_OF_RANGE.
    assert_eq!(
        codes,
        vec![
            Code::InvalidArgument as i32,
            Code::OutOfRange as i32,
            Code::InvalidArgument as i32,
            Code::InvalidArgument as i32
        ],
        "{:?}",
        details(&st)
    );
}

/// Parser value sets over P4Runtime (p4/tests/lang/value_set.p4): listed in the P4Info,
/// written whole with MODIFY, read back, and the parser follows what was written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn value_sets_write_read_and_steer_the_parser() {
    let mut r = rig_on(compiled("../p4/tests/lang/value_set.p4"), &[0, 1], false);
    let info = r.info.clone();
    let set = |name: &str| {
        info.value_sets
            .iter()
            .find(|v| v.preamble.as_ref().unwrap().name == name)
            .unwrap_or_else(|| panic!("no value set {name} in {:?}", info.value_sets))
            .clone()
    };
    let (tags, pairs) = (set("IP.tags"), set("IP.pairs"));
    assert_eq!((tags.size, tags.r#match.len()), (4, 1));
    assert_eq!(pairs.r#match.len(), 2);
    let exact = |id: u32, v: u8| fm(id, F::Exact(p4v1::field_match::Exact { value: vec![v] }));
    let entry = |vs: &pi::ValueSet, members: Vec<Vec<p4v1::FieldMatch>>| {
        E::ValueSetEntry(p4v1::ValueSetEntry {
            value_set_id: vs.preamble.as_ref().unwrap().id,
            members: members
                .into_iter()
                .map(|m| p4v1::ValueSetMember { r#match: m })
                .collect(),
        })
    };
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    // A packet whose first byte is 0x42 is no tag yet: it leaves unmarked.
    let pkt = |a: u8, b: u8| {
        let mut f = vec![a, b];
        f.extend_from_slice(&[0xaa; 62]);
        f
    };
    send(&mut r.hosts[0], &pkt(0x42, 0));
    assert_eq!(recv(&mut r.hosts[1])[..3], [0x42, 0, 0xaa]);
    let want = entry(&tags, vec![vec![exact(1, 0x42)], vec![exact(1, 0x10)]]);
    c.write(write(1, vec![update(Modify, want.clone())]))
        .await
        .unwrap();
    assert_eq!(
        read(&mut c, entry(&tags, vec![])).await,
        vec![want],
        "read back as written"
    );
    send(&mut r.hosts[0], &pkt(0x42, 0));
    assert_eq!(recv(&mut r.hosts[1])[..3], [0x42, 0, 0x11], "now x: marked");
    // A struct set takes one field per member of the struct.
    let pair = entry(&pairs, vec![vec![exact(1, 1), exact(2, 2)]]);
    c.write(write(1, vec![update(Modify, pair)])).await.unwrap();
    send(&mut r.hosts[0], &pkt(1, 2));
    assert_eq!(recv(&mut r.hosts[1])[..3], [1, 2, 0x22]);
    // RECONCILE_AND_COMMIT of a changed program (a set resized) keeps the sets' members.
    let changed = r.source.replacen(
        "value_set<bit<8>>(2) lows;",
        "value_set<bit<8>>(3) lows;",
        1,
    );
    assert_ne!(changed, r.source);
    use p4v1::set_forwarding_pipeline_config_request::Action as A;
    c.set_forwarding_pipeline_config(sfp(A::ReconcileAndCommit, &changed, 1))
        .await
        .unwrap();
    assert_eq!(
        read(&mut c, entry(&tags, vec![])).await,
        vec![entry(
            &tags,
            vec![vec![exact(1, 0x42)], vec![exact(1, 0x10)]]
        )]
    );
    send(&mut r.hosts[0], &pkt(0x42, 0));
    assert_eq!(recv(&mut r.hosts[1])[..3], [0x42, 0, 0x11], "still marked");
    // A wildcard read lists every set; MODIFY with no members clears one.
    assert_eq!(read(&mut c, entry(&set("IP.lows"), vec![])).await.len(), 1);
    let everything = read(
        &mut c,
        E::ValueSetEntry(p4v1::ValueSetEntry {
            value_set_id: 0,
            members: vec![],
        }),
    )
    .await;
    assert_eq!(everything.len(), info.value_sets.len());
    c.write(write(1, vec![update(Modify, entry(&tags, vec![]))]))
        .await
        .unwrap();
    send(&mut r.hosts[0], &pkt(0x42, 0));
    assert_eq!(recv(&mut r.hosts[1])[..3], [0x42, 0, 0xaa]);
    // Refused: INSERT, more members than the set holds, a missing field, an unknown set;
    // a refused write leaves the set as it was.
    let five = (1..=5).map(|v| vec![exact(1, v)]).collect();
    let st = c
        .write(write(
            1,
            vec![
                update(Insert, entry(&tags, vec![vec![exact(1, 7)]])),
                update(Modify, entry(&tags, five)),
                update(Modify, entry(&pairs, vec![vec![exact(1, 1)]])),
                update(
                    Modify,
                    E::ValueSetEntry(p4v1::ValueSetEntry {
                        value_set_id: 0x0300_0001,
                        members: vec![],
                    }),
                ),
            ],
        ))
        .await
        .unwrap_err();
    let codes: Vec<i32> = details(&st).iter().map(|d| d.0).collect();
    assert_eq!(
        codes,
        vec![
            Code::InvalidArgument as i32,
            Code::ResourceExhausted as i32,
            Code::InvalidArgument as i32,
            Code::NotFound as i32,
        ],
        "{:?}",
        details(&st)
    );
    assert_eq!(
        read(&mut c, entry(&tags, vec![])).await,
        vec![entry(&tags, vec![])]
    );
}

/// Direct counters written and read, direct meters configured, read back and reset
/// (control/tests/data/direct_resources.p4); a RED frame is dropped by the program.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_counter_and_meter_cells() {
    let mut r = rig_of(compiled("tests/data/direct_resources.p4"));
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let fwd = table(&info, "Ig.fwd").preamble.unwrap().id;
    let dst = [2, 0, 0, 0, 0, 2];
    let key = p4v1::TableEntry {
        table_id: fwd,
        r#match: vec![fm(
            1,
            F::Exact(p4v1::field_match::Exact {
                value: dst.to_vec(),
            }),
        )],
        ..Default::default()
    };
    let entry = p4v1::TableEntry {
        action: action(&info, "Ig.send", &[&[2]]),
        ..key.clone()
    };
    c.write(write(1, vec![update(Insert, E::TableEntry(entry))]))
        .await
        .unwrap();
    let counter = |data: Option<p4v1::CounterData>| {
        E::DirectCounterEntry(p4v1::DirectCounterEntry {
            table_entry: Some(key.clone()),
            data,
        })
    };
    let meter = |config: Option<p4v1::MeterConfig>| {
        E::DirectMeterEntry(p4v1::DirectMeterEntry {
            table_entry: Some(key.clone()),
            config,
        })
    };
    // Unconfigured: GREEN, forwarded and counted.
    send(&mut r.hosts[0], &frame(dst));
    assert_eq!(recv(&mut r.hosts[1])[..6], dst);
    let one = match &read(&mut c, counter(None)).await[..] {
        [E::DirectCounterEntry(e)] => e.data.unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(one.packet_count, 1);
    let set = p4v1::CounterData {
        byte_count: 1000,
        packet_count: 10,
    };
    c.write(write(1, vec![update(Modify, counter(Some(set)))]))
        .await
        .unwrap();
    let got = read(&mut c, counter(None)).await;
    assert!(
        matches!(&got[..], [E::DirectCounterEntry(e)] if e.data == Some(set)),
        "{got:?}"
    );
    // A meter with no tokens at all: the first frame reads the stored GREEN (Tofino's meter
    // colours a packet by the previous update) and drives both buckets negative; every frame
    // after it is RED, dropped by the program.
    let empty = p4v1::MeterConfig {
        cir: 1,
        cburst: 0,
        pir: 1,
        pburst: 0,
    };
    c.write(write(1, vec![update(Modify, meter(Some(empty)))]))
        .await
        .unwrap();
    let got = read(&mut c, meter(None)).await;
    assert!(
        matches!(&got[..], [E::DirectMeterEntry(e)] if e.config == Some(empty)),
        "{got:?}"
    );
    let wild = E::DirectMeterEntry(p4v1::DirectMeterEntry::default());
    assert_eq!(read(&mut c, wild).await.len(), 1);
    send(&mut r.hosts[0], &frame(dst));
    assert_eq!(recv(&mut r.hosts[1])[..6], dst);
    send(&mut r.hosts[0], &frame(dst));
    // The switch runs on its own thread: wait until it has counted the RED frame, so the
    // reset below cannot overtake it.
    let mut counted = 0;
    for _ in 0..500 {
        counted = match &read(&mut c, counter(None)).await[..] {
            [E::DirectCounterEntry(e)] => e.data.unwrap().packet_count,
            other => panic!("{other:?}"),
        };
        if counted == 12 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(counted, 12, "the RED frame was never counted");
    // Reset: unconfigured again, frames pass; the RED one never arrived.
    c.write(write(1, vec![update(Modify, meter(None))]))
        .await
        .unwrap();
    let got = read(&mut c, meter(None)).await;
    assert!(
        matches!(&got[..], [E::DirectMeterEntry(e)] if e.config.is_none()),
        "{got:?}"
    );
    let next = [2, 0, 0, 0, 0, 2];
    let mut marked = frame(next);
    marked[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 0x77]);
    send(&mut r.hosts[0], &marked);
    assert_eq!(recv(&mut r.hosts[1])[6..12], [2, 0, 0, 0, 0, 0x77]);
    let got = read(&mut c, counter(None)).await;
    assert!(
        matches!(&got[..], [E::DirectCounterEntry(e)] if e.data.unwrap().packet_count == 13),
        "the RED frame and the last one counted: {got:?}"
    );
}

/// ROLLBACK_ON_ERROR and DATAPLANE_ATOMIC: a batch applies whole or not at all; the failing
/// update carries its own error, the others ABORTED, and nothing of the batch stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_batches_apply_whole_or_not_at_all() {
    use p4v1::write_request::Atomicity;
    let r = rig();
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let mac_t = table(&info, "SwitchIngress.mac_dst").preamble.unwrap().id;
    let entries = |c: &mut P4RuntimeClient<Channel>| {
        let e = E::TableEntry(p4v1::TableEntry {
            table_id: mac_t,
            ..Default::default()
        });
        let mut c = c.clone();
        async move { read(&mut c, e).await.len() }
    };
    let a = E::TableEntry(mac_entry(&info, [2, 0, 0, 0, 0, 0xa], 1));
    let b = E::TableEntry(mac_entry(&info, [2, 0, 0, 0, 0, 0xb], 2));
    c.write(write(1, vec![update(Insert, a.clone())]))
        .await
        .unwrap();
    for atomicity in [Atomicity::RollbackOnError, Atomicity::DataplaneAtomic] {
        // b is new (applies, then is undone), a exists already (fails on the switch), and
        // deleting b (never there before) would only pass after b's insert.
        let req = p4v1::WriteRequest {
            atomicity: atomicity as i32,
            ..write(
                1,
                vec![
                    update(Insert, b.clone()),
                    update(Insert, a.clone()),
                    update(Delete, b.clone()),
                ],
            )
        };
        let st = c.write(req).await.unwrap_err();
        let codes: Vec<i32> = details(&st).iter().map(|d| d.0).collect();
        assert_eq!(
            codes,
            vec![
                Code::Aborted as i32,
                Code::AlreadyExists as i32,
                Code::Aborted as i32
            ],
            "{atomicity:?}: {:?}",
            details(&st)
        );
        assert_eq!(entries(&mut c).await, 1, "{atomicity:?}: only a stays");
        // A refusal before the switch (an unknown table) stops the whole batch too.
        let mut bad = mac_entry(&info, [2, 0, 0, 0, 0, 0xc], 3);
        bad.table_id = 0x0200_0001;
        let req = p4v1::WriteRequest {
            atomicity: atomicity as i32,
            ..write(
                1,
                vec![
                    update(Insert, b.clone()),
                    update(Insert, E::TableEntry(bad)),
                ],
            )
        };
        let st = c.write(req).await.unwrap_err();
        let codes: Vec<i32> = details(&st).iter().map(|d| d.0).collect();
        assert_eq!(
            codes,
            vec![Code::Aborted as i32, Code::NotFound as i32],
            "{atomicity:?}"
        );
        assert_eq!(entries(&mut c).await, 1);
    }
    // A batch that succeeds applies whole.
    let req = p4v1::WriteRequest {
        atomicity: Atomicity::RollbackOnError as i32,
        ..write(
            1,
            vec![update(Insert, b.clone()), update(Delete, a.clone())],
        )
    };
    c.write(req).await.unwrap();
    let got = read(
        &mut c,
        E::TableEntry(p4v1::TableEntry {
            table_id: mac_t,
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(got.len(), 1);
    assert!(
        matches!(&got[0], E::TableEntry(e) if e.r#match == mac_entry(&info, [2, 0, 0, 0, 0, 0xb], 2).r#match)
    );
}

/// Idle timeouts (direct_resources.p4's `fwd` has `idle_timeout = true`): the P4Info says
/// NOTIFY_CONTROL, an entry's TTL reads back, an entry not hit for its TTL is told to the
/// primary once per idle period, a hit restarts the period; tables without idle timeouts
/// refuse a TTL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_timeouts_notify_the_primary() {
    let mut r = rig_of(compiled("tests/data/direct_resources.p4"));
    let info = r.info.clone();
    let t = table(&info, "Ig.fwd");
    assert_eq!(
        t.idle_timeout_behavior,
        pi::table::IdleTimeoutBehavior::NotifyControl as i32
    );
    let mut c = client(&r).await;
    let (mut s, _) = open(&mut c, 1).await;
    let dst = [2, 0, 0, 0, 0, 9];
    let ttl: i64 = 100_000_000;
    let entry = p4v1::TableEntry {
        table_id: t.preamble.as_ref().unwrap().id,
        r#match: vec![fm(
            1,
            F::Exact(p4v1::field_match::Exact {
                value: dst.to_vec(),
            }),
        )],
        action: action(&info, "Ig.send", &[&[2]]),
        idle_timeout_ns: ttl,
        ..Default::default()
    };
    c.write(write(1, vec![update(Insert, E::TableEntry(entry.clone()))]))
        .await
        .unwrap();
    let since = |c: &mut P4RuntimeClient<Channel>| {
        let mut c = c.clone();
        let q = E::TableEntry(p4v1::TableEntry {
            table_id: entry.table_id,
            time_since_last_hit: Some(Default::default()),
            ..Default::default()
        });
        async move {
            match &read(&mut c, q).await[..] {
                [E::TableEntry(e)] => {
                    assert_eq!(e.idle_timeout_ns, ttl);
                    e.time_since_last_hit.unwrap().elapsed_ns
                }
                other => panic!("{other:?}"),
            }
        }
    };
    let n = idle_note(&mut s).await;
    assert_eq!(n.table_entry.len(), 1);
    assert_eq!(n.table_entry[0].r#match, entry.r#match);
    assert_eq!(n.table_entry[0].idle_timeout_ns, ttl);
    let idle_for = since(&mut c).await;
    assert!(idle_for >= ttl, "told after {idle_for} ns");
    // A hit: the time since the last hit starts again, and so does the idle period.
    send(&mut r.hosts[0], &frame(dst));
    assert_eq!(recv(&mut r.hosts[1])[..6], dst);
    let after = since(&mut c).await;
    assert!(
        after < idle_for,
        "after the hit {after} ns, before {idle_for} ns"
    );
    let again = idle_note(&mut s).await;
    assert_eq!(again.table_entry[0].r#match, entry.r#match);
    // l2l3's tables have no idle timeouts: a TTL is refused.
    drop(s);
    let r2 = rig();
    let mut c2 = client(&r2).await;
    let (_s2, _) = open(&mut c2, 1).await;
    let mut e = mac_entry(&r2.info, [2, 0, 0, 0, 0, 1], 1);
    e.idle_timeout_ns = 1_000_000;
    let st = c2
        .write(write(1, vec![update(Insert, E::TableEntry(e))]))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::InvalidArgument as i32);
}

/// The next idle-timeout notification on the stream (other messages skipped).
async fn idle_note(s: &mut Stream) -> p4v1::IdleTimeoutNotification {
    loop {
        if let p4v1::stream_message_response::Update::IdleTimeoutNotification(n) = next(s).await {
            return n;
        }
    }
}

/// The spec's table-entry rules on direct_resources.p4's `fwd` (direct counter and meter;
/// `send` @tableonly, `drop` @defaultonly): counter_data and meter_config given on INSERT are
/// applied and read back with the entry, as are `metadata` and `controller_metadata`; a
/// MODIFY without an action changes nothing; scope violations are PERMISSION_DENIED; a member
/// id on a direct table is INVALID_ARGUMENT; wildcard reads filter by action and priority; a
/// DirectCounterEntry read of a missing entry is NOT_FOUND.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_entries_follow_the_spec_rules() {
    let r = rig_of(compiled("tests/data/direct_resources.p4"));
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let fwd = table(&info, "Ig.fwd").preamble.unwrap().id;
    let key = |last: u8| p4v1::TableEntry {
        table_id: fwd,
        r#match: vec![fm(
            1,
            F::Exact(p4v1::field_match::Exact {
                value: vec![2, 0, 0, 0, 0, last],
            }),
        )],
        ..Default::default()
    };
    let data = p4v1::CounterData {
        byte_count: 4200,
        packet_count: 42,
    };
    let cfg = p4v1::MeterConfig {
        cir: 5,
        cburst: 10,
        pir: 6,
        pburst: 12,
    };
    let entry = p4v1::TableEntry {
        action: action(&info, "Ig.send", &[&[2]]),
        counter_data: Some(data),
        meter_config: Some(cfg),
        metadata: b"opaque".to_vec(),
        controller_metadata: 9,
        ..key(1)
    };
    c.write(write(1, vec![update(Insert, E::TableEntry(entry.clone()))]))
        .await
        .unwrap();
    let asked = p4v1::TableEntry {
        counter_data: Some(Default::default()),
        meter_config: Some(Default::default()),
        ..key(1)
    };
    assert_eq!(
        read(&mut c, E::TableEntry(asked.clone())).await,
        vec![E::TableEntry(entry.clone())]
    );
    // MODIFY without an action: a no-op on an entry that exists, NOT_FOUND on one that does not.
    c.write(write(1, vec![update(Modify, E::TableEntry(key(1)))]))
        .await
        .unwrap();
    assert_eq!(
        read(&mut c, E::TableEntry(asked)).await,
        vec![E::TableEntry(entry.clone())]
    );
    let st = c
        .write(write(1, vec![update(Modify, E::TableEntry(key(2)))]))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::NotFound as i32, "{st:?}");
    // Scopes, and a member id where the table takes an action.
    let drop_entry = p4v1::TableEntry {
        action: action(&info, "Ig.drop", &[]),
        ..key(3)
    };
    let send_default = p4v1::TableEntry {
        table_id: fwd,
        is_default_action: true,
        action: action(&info, "Ig.send", &[&[1]]),
        ..Default::default()
    };
    let member = p4v1::TableEntry {
        action: Some(p4v1::TableAction {
            r#type: Some(p4v1::table_action::Type::ActionProfileMemberId(1)),
        }),
        ..key(4)
    };
    let st = c
        .write(write(
            1,
            vec![
                update(Insert, E::TableEntry(drop_entry)),
                update(Modify, E::TableEntry(send_default)),
                update(Insert, E::TableEntry(member)),
            ],
        ))
        .await
        .unwrap_err();
    let codes: Vec<i32> = details(&st).iter().map(|d| d.0).collect();
    assert_eq!(
        codes,
        [
            Code::PermissionDenied as i32,
            Code::PermissionDenied as i32,
            Code::InvalidArgument as i32
        ],
        "{st:?}"
    );
    // Wildcard filters: by action id, by priority (fwd's entries have none).
    c.write(write(
        1,
        vec![update(
            Insert,
            E::TableEntry(p4v1::TableEntry {
                action: action(&info, "Ig.send", &[&[3]]),
                ..key(5)
            }),
        )],
    ))
    .await
    .unwrap();
    let filtered = |name: &str, priority: i32| {
        E::TableEntry(p4v1::TableEntry {
            table_id: fwd,
            action: action(&info, name, &[]),
            priority,
            ..Default::default()
        })
    };
    assert_eq!(read(&mut c, filtered("Ig.send", 0)).await.len(), 2);
    assert_eq!(read(&mut c, filtered("Ig.drop", 0)).await.len(), 0);
    assert_eq!(read(&mut c, filtered("Ig.send", 11)).await.len(), 0);
    // A direct counter of an entry that does not exist.
    let st = c
        .read(p4v1::ReadRequest {
            device_id: 1,
            entities: vec![p4v1::Entity {
                entity: Some(E::DirectCounterEntry(p4v1::DirectCounterEntry {
                    table_entry: Some(key(9)),
                    data: None,
                })),
            }],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::NotFound, "{st:?}");
}

/// A SetForwardingPipelineConfig request of `source` (no P4Info) from the primary `election`.
fn sfp(
    action: p4v1::set_forwarding_pipeline_config_request::Action,
    source: &str,
    election: u64,
) -> p4v1::SetForwardingPipelineConfigRequest {
    p4v1::SetForwardingPipelineConfigRequest {
        device_id: 1,
        election_id: Some(p4v1::Uint128 {
            high: 0,
            low: election,
        }),
        action: action as i32,
        config: Some(p4v1::ForwardingPipelineConfig {
            p4_device_config: source.as_bytes().to_vec(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// wire.p4 with `stmt` first in its ingress `apply`.
fn wire_with(stmt: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/programs/wire.p4");
    let base = std::fs::read_to_string(path).unwrap();
    let at = base.find("apply {").unwrap() + "apply {".len();
    format!("{}{stmt}{}", &base[..at], &base[at..])
}

/// Programs the frontend accepts with expressions near its depth limit (a 1,000-term `+`
/// chain, a 1,990-term `||` condition) commit without overflowing the pipeline thread's stack,
/// and the server answers afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_expressions_commit_without_killing_the_switch() {
    use p4v1::set_forwarding_pipeline_config_request::Action as A;
    let r = rig();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let port = "ig_tm_md.ucast_egress_port";
    let plus = wire_with(&format!("{port} = {port}{};", " + 1".repeat(1000)));
    let or = wire_with(&format!(
        "if ({port} == 0{}) {{ {port} = 1; }}",
        format!(" || {port} == 1").repeat(1990)
    ));
    for source in [plus, or] {
        c.set_forwarding_pipeline_config(sfp(A::VerifyAndCommit, &source, 1))
            .await
            .unwrap();
        let got = c
            .get_forwarding_pipeline_config(p4v1::GetForwardingPipelineConfigRequest {
                device_id: 1,
                response_type: 0,
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(got.config.unwrap().p4_device_config, source.as_bytes());
    }
}

/// A pushed device config may `#include` the bundled headers only: a host file (absolute
/// path or `../`) is refused by name, and its text is never quoted back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn device_config_includes_only_bundled_headers() {
    use p4v1::set_forwarding_pipeline_config_request::Action as A;
    let r = rig();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.p4");
    std::fs::write(&secret, "SECRET-LINE-XYZ\n").unwrap();
    let rel = format!(
        "{}{}",
        "../".repeat(std::env::current_dir().unwrap().components().count()),
        secret.display().to_string().trim_start_matches('/')
    );
    for inc in [secret.display().to_string(), rel] {
        let source = format!("#include \"{inc}\"\n{}", r.source);
        let st = c
            .set_forwarding_pipeline_config(sfp(A::Verify, &source, 1))
            .await
            .unwrap_err();
        assert_eq!(st.code(), Code::InvalidArgument, "{st:?}");
        let msg = st.message();
        assert!(
            msg.contains("refused") && msg.contains("secret.p4"),
            "{msg}"
        );
        assert!(!msg.contains("SECRET-LINE-XYZ"), "{msg}");
    }
    // The bundled headers still resolve, whichever quotes name them (l2l3.p4 includes
    // <core.p4> and <tna.p4>).
    assert!(r.source.contains("#include <core.p4>") && r.source.contains("#include <tna.p4>"));
    let quoted = format!("#include \"core.p4\"\n{}", r.source);
    for source in [r.source.clone(), quoted] {
        c.set_forwarding_pipeline_config(sfp(A::Verify, &source, 1))
            .await
            .unwrap();
    }
}

/// One Write of 1,000 one-shot entries (a group of two members each) is applied whole and
/// answered as such, however long the switch takes: group creation does not rescan the groups
/// present, and the server waits for the switch's answer instead of answering UNAVAILABLE
/// while the switch goes on to apply the batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_one_shot_entries_write_and_read_back() {
    const N: u16 = 1000;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/programs/switch.p4");
    let src = std::fs::read_to_string(path)
        .unwrap()
        .replace(
            "ActionProfile(1024) ecmp_members",
            "ActionProfile(2048) ecmp_members",
        )
        .replace(
            "FAIR, 16, 256) ecmp_selector",
            "FAIR, 16, 1024) ecmp_selector",
        );
    let opts = p4::compile::CompileOptions::default();
    let prog = p4info::compile_source("switch.p4", &src, &opts).unwrap();
    let r = rig_of((prog, src));
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let ecmp = table(&info, "SwitchIngress.ecmp").preamble.unwrap().id;
    let Some(p4v1::table_action::Type::Action(nh)) =
        action(&info, "SwitchIngress.set_nexthop", &[&[11]])
            .unwrap()
            .r#type
    else {
        unreachable!()
    };
    let act = |v: u8| p4v1::ActionProfileAction {
        action: Some(p4v1::Action {
            params: vec![p4v1::action::Param {
                value: vec![v],
                ..nh.params[0].clone()
            }],
            ..nh.clone()
        }),
        weight: 1,
        watch_kind: None,
    };
    let updates: Vec<p4v1::Update> = (1..=N)
        .map(|k| {
            let b = k.to_be_bytes();
            let key = if k < 256 { vec![b[1]] } else { b.to_vec() };
            let e = p4v1::TableEntry {
                table_id: ecmp,
                r#match: vec![fm(1, F::Exact(p4v1::field_match::Exact { value: key }))],
                action: Some(p4v1::TableAction {
                    r#type: Some(p4v1::table_action::Type::ActionProfileActionSet(
                        p4v1::ActionProfileActionSet {
                            action_profile_actions: vec![act(1 + (k % 7) as u8), act(9)],
                        },
                    )),
                }),
                ..Default::default()
            };
            update(Insert, E::TableEntry(e))
        })
        .collect();
    c.write(write(1, updates)).await.unwrap();
    let got = read(
        &mut c,
        E::TableEntry(p4v1::TableEntry {
            table_id: ecmp,
            ..Default::default()
        }),
    )
    .await;
    assert_eq!(got.len(), usize::from(N));
    let sets = got
        .iter()
        .filter(|e| {
            matches!(e, E::TableEntry(t) if matches!(
                t.action.as_ref().and_then(|a| a.r#type.as_ref()),
                Some(p4v1::table_action::Type::ActionProfileActionSet(s))
                    if s.action_profile_actions.len() == 2
            ))
        })
        .count();
    assert_eq!(
        sets,
        usize::from(N),
        "every entry reads back with its action set"
    );
}

/// A batch with hundreds of failed updates answers within gRPC's default metadata limits (a
/// summary instead of per-update details that would not fit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_failed_updates_fit_grpc_metadata() {
    let r = rig();
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let bad = |i: u8| {
        let mut e = mac_entry(&info, [2, 0, 0, 0, 1, i], 1);
        e.table_id = 0x0bad_0000 | u32::from(i);
        update(Insert, E::TableEntry(e))
    };
    let st = c
        .write(write(1, (0..=255).chain(0..44).map(bad).collect()))
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::Unknown, "{st:?}");
    assert!(
        st.details().len() < 8 * 1024,
        "{} bytes",
        st.details().len()
    );
    assert!(st.message().len() < 4 * 1024, "{}", st.message().len());
    assert!(
        st.message().starts_with("300 of 300 update(s) failed"),
        "{}",
        st.message()
    );
    // A few failures still come with one error per update.
    let st = c
        .write(write(1, (0..3).map(bad).collect()))
        .await
        .unwrap_err();
    assert_eq!(details(&st).len(), 3, "{st:?}");
}

/// P4Info checks of SetForwardingPipelineConfig: differences named in words, a P4Info listing
/// a table twice, without the program's action profiles or with another max_group_size, and
/// one with a megabyte name are refused with INVALID_ARGUMENT and a message of bounded size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipeline_config_p4info_checks() {
    use p4v1::set_forwarding_pipeline_config_request::Action as A;
    let r = rig_of(compiled("../p4/programs/switch.p4"));
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let with_info = |edit: &dyn Fn(&mut pi::P4Info)| {
        let mut info = r.info.clone();
        edit(&mut info);
        let mut req = sfp(A::Verify, &r.source, 1);
        req.config.as_mut().unwrap().p4info = Some(info);
        req
    };
    c.set_forwarding_pipeline_config(with_info(&|_| {}))
        .await
        .unwrap();
    type Edit<'a> = &'a dyn Fn(&mut pi::P4Info);
    let cases: [(Edit, &str); 5] = [
        (
            &|i| i.tables[0].preamble.as_mut().unwrap().id ^= 1,
            "is not in the program",
        ),
        (
            &|i| {
                let t = i.tables[0].clone();
                i.tables.push(t)
            },
            "twice",
        ),
        (&|i| i.action_profiles.clear(), "is not in the P4Info"),
        (
            &|i| {
                for a in &mut i.action_profiles {
                    a.max_group_size = 100_000;
                }
            },
            "at most 100000 members",
        ),
        (
            &|i| i.tables[0].preamble.as_mut().unwrap().name = "t".repeat(1 << 20),
            "characters ...]",
        ),
    ];
    for (edit, says) in cases {
        let st = c
            .set_forwarding_pipeline_config(with_info(edit))
            .await
            .unwrap_err();
        assert_eq!(st.code(), Code::InvalidArgument, "{st:?}");
        assert!(st.message().contains(says), "{}", st.message());
        assert!(!st.message().contains("Some(("), "{}", st.message());
        assert!(st.message().len() < 4 * 1024, "{}", st.message().len());
    }
}

/// switch.p4's selector `ecmp_selector` with its profile's members 1 and 2 (next hops 11 and
/// 12), group 1 of both, and ecmp entries: key 1 → group 1, key 2 → member 2. Returns the
/// entities written, in the order a wildcard read gives them (members, group, entries).
async fn ecmp_state(info: &pi::P4Info, c: &mut P4RuntimeClient<Channel>) -> Vec<E> {
    let pid = info.action_profiles[0].preamble.as_ref().unwrap().id;
    let Some(p4v1::table_action::Type::Action(a)) =
        action(info, "SwitchIngress.set_nexthop", &[&[11]])
            .unwrap()
            .r#type
    else {
        unreachable!()
    };
    let member = |id: u32, nh: u8| {
        let mut a = a.clone();
        a.params[0].value = vec![nh];
        E::ActionProfileMember(p4v1::ActionProfileMember {
            action_profile_id: pid,
            member_id: id,
            action: Some(a),
        })
    };
    let group = E::ActionProfileGroup(p4v1::ActionProfileGroup {
        action_profile_id: pid,
        group_id: 1,
        members: [1, 2]
            .map(|m| p4v1::action_profile_group::Member {
                member_id: m,
                weight: 1,
                watch_kind: None,
            })
            .to_vec(),
        max_size: 0,
    });
    let ecmp = table(info, "SwitchIngress.ecmp").preamble.unwrap().id;
    let entry = |key: u8, to: p4v1::table_action::Type| {
        E::TableEntry(p4v1::TableEntry {
            table_id: ecmp,
            r#match: vec![fm(
                1,
                F::Exact(p4v1::field_match::Exact { value: vec![key] }),
            )],
            action: Some(p4v1::TableAction { r#type: Some(to) }),
            ..Default::default()
        })
    };
    use p4v1::table_action::Type as T;
    let all = vec![
        member(1, 11),
        member(2, 12),
        group,
        entry(1, T::ActionProfileGroupId(1)),
        entry(2, T::ActionProfileMemberId(2)),
    ];
    let updates = all.iter().map(|e| update(Insert, e.clone())).collect();
    c.write(write(1, updates)).await.unwrap();
    all
}

/// What the wildcard reads of switch.p4's ecmp profile and table give back.
async fn ecmp_read(info: &pi::P4Info, c: &mut P4RuntimeClient<Channel>) -> Vec<E> {
    let pid = info.action_profiles[0].preamble.as_ref().unwrap().id;
    let ecmp = table(info, "SwitchIngress.ecmp").preamble.unwrap().id;
    let mut out = read(
        c,
        E::ActionProfileMember(p4v1::ActionProfileMember {
            action_profile_id: pid,
            ..Default::default()
        }),
    )
    .await;
    out.extend(
        read(
            c,
            E::ActionProfileGroup(p4v1::ActionProfileGroup {
                action_profile_id: pid,
                ..Default::default()
            }),
        )
        .await,
    );
    out.extend(
        read(
            c,
            E::TableEntry(p4v1::TableEntry {
                table_id: ecmp,
                ..Default::default()
            }),
        )
        .await,
    );
    out
}

/// RECONCILE_AND_COMMIT of a changed program keeps an action selector's members and groups
/// and the entries that point at them, and the multicast groups and clone sessions (spec: it
/// preserves the forwarding state); where the
/// new program cannot hold them (a smaller largest group) it is INVALID_ARGUMENT naming the
/// group and the reason, and the old program and its state stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_keeps_action_profile_members_groups_and_entries() {
    use p4v1::set_forwarding_pipeline_config_request::Action as A;
    let r = rig_of(compiled("../p4/programs/switch.p4"));
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let written = ecmp_state(&info, &mut c).await;
    assert_eq!(ecmp_read(&info, &mut c).await, written);
    // A multicast group and a clone session: the traffic manager's state.
    use p4v1::packet_replication_engine_entry::Type as Pre;
    let replica = |port: u32| p4v1::Replica {
        egress_port: port,
        ..Default::default()
    };
    let pre = [
        Pre::MulticastGroupEntry(p4v1::MulticastGroupEntry {
            multicast_group_id: 5,
            replicas: vec![replica(1), replica(2)],
            metadata: vec![7],
        }),
        Pre::CloneSessionEntry(p4v1::CloneSessionEntry {
            session_id: 9,
            replicas: vec![replica(2)],
            class_of_service: 0,
            packet_length_bytes: 128,
        }),
    ]
    .map(|t| {
        E::PacketReplicationEngineEntry(p4v1::PacketReplicationEngineEntry { r#type: Some(t) })
    });
    let updates = pre.iter().map(|e| update(Insert, e.clone())).collect();
    c.write(write(1, updates)).await.unwrap();
    let pre_read = |c: &mut P4RuntimeClient<Channel>| {
        let mut c = c.clone();
        async move {
            let mut out = Vec::new();
            for t in [
                Pre::MulticastGroupEntry(Default::default()),
                Pre::CloneSessionEntry(Default::default()),
            ] {
                let e = p4v1::PacketReplicationEngineEntry { r#type: Some(t) };
                out.extend(read(&mut c, E::PacketReplicationEngineEntry(e)).await);
            }
            out
        }
    };
    assert_eq!(pre_read(&mut c).await, pre.to_vec());
    // ipv4_fib resized: a changed program with the same objects.
    let resized = r.source.replacen("size = 16384;", "size = 8192;", 1);
    assert_ne!(resized, r.source);
    c.set_forwarding_pipeline_config(sfp(A::ReconcileAndCommit, &resized, 1))
        .await
        .unwrap();
    assert_eq!(ecmp_read(&info, &mut c).await, written);
    assert_eq!(pre_read(&mut c).await, pre.to_vec());
    // The entries still steer packets through the kept group: a second group write works on
    // it, and deleting a member it holds is refused as in use.
    let pid = info.action_profiles[0].preamble.as_ref().unwrap().id;
    let st = c
        .write(write(
            1,
            vec![update(
                Delete,
                E::ActionProfileMember(p4v1::ActionProfileMember {
                    action_profile_id: pid,
                    member_id: 2,
                    ..Default::default()
                }),
            )],
        ))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::FailedPrecondition as i32);
    // Groups of at most one member cannot hold group 1.
    let small = resized.replacen(
        "SelectorMode_t.FAIR, 16, 256",
        "SelectorMode_t.FAIR, 1, 256",
        1,
    );
    assert_ne!(small, resized);
    let st = c
        .set_forwarding_pipeline_config(sfp(A::ReconcileAndCommit, &small, 1))
        .await
        .unwrap_err();
    assert_eq!(st.code(), Code::InvalidArgument, "{st:?}");
    assert!(
        st.message().contains("group 1") && st.message().contains("at most 1"),
        "{st:?}"
    );
    assert!(!st.message().contains("does not fit"), "{st:?}");
    assert_eq!(ecmp_read(&info, &mut c).await, written);
    let got = c
        .get_forwarding_pipeline_config(p4v1::GetForwardingPipelineConfigRequest {
            device_id: 1,
            response_type: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.config.unwrap().p4_device_config, resized.as_bytes());
}

/// An Ethernet + IPv4 (UDP) frame from port `src` to 10.0.0.2.
fn ipv4_frame() -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    let mut ip = vec![
        0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ];
    let sum = ip
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum::<u32>();
    let sum = !((sum & 0xffff) + (sum >> 16)) as u16;
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&[0, 7, 0, 9, 0, 26, 0, 0]);
    f.extend_from_slice(&[0x5a; 18]);
    f
}

/// The default entry's direct counter (spec: the default entry has direct resources too):
/// switch.p4's `acl` misses and runs its default `acl_permit`, which counts, into the default
/// entry's cell; `counter_data` reads and writes it on the default TableEntry and through a
/// DirectCounterEntry naming the default entry, and entries' cells are not touched by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_entry_has_its_direct_counter() {
    let mut r = rig_of(compiled("../p4/programs/switch.p4"));
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let acl = table(&info, "SwitchIngress.acl").preamble.unwrap().id;
    let default_te = |counter_data: Option<p4v1::CounterData>| p4v1::TableEntry {
        table_id: acl,
        is_default_action: true,
        counter_data,
        ..Default::default()
    };
    let read_default = |c: &mut P4RuntimeClient<Channel>| {
        let mut c = c.clone();
        async move {
            match &read(
                &mut c,
                E::TableEntry(default_te(Some(p4v1::CounterData::default()))),
            )
            .await[..]
            {
                [E::TableEntry(e)] => e.counter_data.unwrap(),
                other => panic!("{other:?}"),
            }
        }
    };
    assert_eq!(read_default(&mut c).await, p4v1::CounterData::default());
    // Without counter_data in the request there is none in the answer.
    match &read(&mut c, E::TableEntry(default_te(None))).await[..] {
        [E::TableEntry(e)] => assert_eq!(e.counter_data, None),
        other => panic!("{other:?}"),
    }
    send(&mut r.hosts[0], &ipv4_frame());
    let mut got = p4v1::CounterData::default();
    for _ in 0..500 {
        got = read_default(&mut c).await;
        if got.packet_count == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(got.packet_count, 1, "the miss was never counted");
    assert!(got.byte_count >= 64, "{got:?}");
    // A DirectCounterEntry names the default entry; a wildcard one reads entries only.
    let dce = |data| {
        E::DirectCounterEntry(p4v1::DirectCounterEntry {
            table_entry: Some(default_te(None)),
            data,
        })
    };
    match &read(&mut c, dce(None)).await[..] {
        [E::DirectCounterEntry(e)] => {
            assert!(e.table_entry.as_ref().unwrap().is_default_action);
            assert_eq!(e.data, Some(got));
        }
        other => panic!("{other:?}"),
    }
    let wild = E::DirectCounterEntry(p4v1::DirectCounterEntry {
        table_entry: Some(p4v1::TableEntry {
            table_id: acl,
            ..Default::default()
        }),
        data: None,
    });
    assert_eq!(read(&mut c, wild).await, vec![]);
    // Writes: through the DirectCounterEntry, and with the default TableEntry's MODIFY.
    let set = p4v1::CounterData {
        byte_count: 5000,
        packet_count: 50,
    };
    c.write(write(1, vec![update(Modify, dce(Some(set)))]))
        .await
        .unwrap();
    assert_eq!(read_default(&mut c).await, set);
    let permit = p4v1::TableEntry {
        action: action(&info, "SwitchIngress.acl_permit", &[]),
        ..default_te(Some(p4v1::CounterData::default()))
    };
    c.write(write(1, vec![update(Modify, E::TableEntry(permit))]))
        .await
        .unwrap();
    assert_eq!(read_default(&mut c).await, p4v1::CounterData::default());
    // The default entry has no match: one given is refused.
    let mut keyed = default_te(None);
    keyed.priority = 3;
    let st = c
        .write(write(
            1,
            vec![update(
                Modify,
                E::DirectCounterEntry(p4v1::DirectCounterEntry {
                    table_entry: Some(keyed),
                    data: Some(set),
                }),
            )],
        ))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::InvalidArgument as i32);
}

/// VERIFY_AND_SAVE of another program (switch.p4 on a switch running l2l3.p4): the forwarding
/// state is not touched (l2l3's entry still forwards), reads and writes refer to the saved
/// program (its ids; l2l3's are unknown) and see what was written for it; COMMIT starts
/// switch.p4 with exactly that state (what replaying the writes gives).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_after_verify_and_save_refer_to_the_saved_config_and_commit_keeps_them() {
    use p4v1::set_forwarding_pipeline_config_request::Action as A;
    let mut r = rig();
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let dst = [2, 0, 0, 0, 0, 2];
    let mac = mac_entry(&info, dst, 2);
    c.write(write(1, vec![update(Insert, E::TableEntry(mac.clone()))]))
        .await
        .unwrap();
    let (sw_prog, sw_source) = compiled("../p4/programs/switch.p4");
    let sw_info = sw_prog.p4info;
    c.set_forwarding_pipeline_config(sfp(A::VerifyAndSave, &sw_source, 1))
        .await
        .unwrap();
    let written = ecmp_state(&sw_info, &mut c).await;
    assert_eq!(ecmp_read(&sw_info, &mut c).await, written);
    // l2l3's table is not in the saved program.
    let st = c
        .write(write(1, vec![update(Delete, E::TableEntry(mac.clone()))]))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::NotFound as i32, "{st:?}");
    // Packets still run l2l3 and its entry.
    send(&mut r.hosts[0], &frame(dst));
    assert_eq!(recv(&mut r.hosts[1])[..6], dst);
    let get = |c: &mut P4RuntimeClient<Channel>| {
        let mut c = c.clone();
        async move {
            c.get_forwarding_pipeline_config(p4v1::GetForwardingPipelineConfigRequest {
                device_id: 1,
                response_type: 0,
            })
            .await
            .unwrap()
            .into_inner()
            .config
            .unwrap()
            .p4_device_config
        }
    };
    assert_eq!(get(&mut c).await, r.source.as_bytes());
    let commit = p4v1::SetForwardingPipelineConfigRequest {
        config: None,
        ..sfp(A::Commit, "", 1)
    };
    c.set_forwarding_pipeline_config(commit.clone())
        .await
        .unwrap();
    assert_eq!(get(&mut c).await, sw_source.as_bytes());
    assert_eq!(ecmp_read(&sw_info, &mut c).await, written);
    // Nothing is saved any more.
    let st = c.set_forwarding_pipeline_config(commit).await.unwrap_err();
    assert_eq!(st.code(), Code::FailedPrecondition, "{st:?}");
}

/// The member ids of group `group` of `profile` on the switch.
fn switch_group(r: &Rig, profile: &str, group: u32) -> Vec<u32> {
    let profile = profile.to_string();
    let views =
        r.rt.as_ref()
            .unwrap()
            .handle()
            .each(Duration::from_secs(5), move |sw, _| {
                sw.profile_read(pipeline::api::PipeSel::All, &profile)
                    .unwrap()
            })
            .unwrap();
    views[0]
        .groups
        .iter()
        .find(|g| g.0 == group)
        .map(|g| g.1.clone())
        .unwrap_or_default()
}

/// Polls until group `group` of `profile` on the switch holds `want`.
async fn group_becomes(r: &Rig, profile: &str, group: u32, want: &[u32]) {
    let mut got = Vec::new();
    for _ in 0..500 {
        got = switch_group(r, profile, group);
        if got == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("group {group} holds {got:?}, not {want:?}");
}

/// Group members with `watch_port` (spec, action profile groups): a member whose watched port
/// is down is not in the group the switch selects from, and is again once the port is up;
/// reads give the group back as written; a group written while a watched port is down
/// leaves that member out at once. Weights other than 1 are refused with the reason, as is a
/// watched port that is no device port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_members_watching_a_down_port_are_not_selected() {
    let r = rig_of(compiled("../p4/programs/switch.p4"));
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let written = ecmp_state(&info, &mut c).await;
    let pid = info.action_profiles[0].preamble.as_ref().unwrap().id;
    let profile = info.action_profiles[0]
        .preamble
        .as_ref()
        .unwrap()
        .name
        .clone();
    use p4v1::action_profile_group::member::WatchKind;
    let group = |watch: [u8; 2], weight: i32| {
        E::ActionProfileGroup(p4v1::ActionProfileGroup {
            action_profile_id: pid,
            group_id: 1,
            members: [(1, watch[0]), (2, watch[1])]
                .map(|(m, port)| p4v1::action_profile_group::Member {
                    member_id: m,
                    weight,
                    watch_kind: Some(WatchKind::WatchPort(vec![port])),
                })
                .to_vec(),
            max_size: 0,
        })
    };
    let watched = group([1, 2], 1);
    c.write(write(1, vec![update(Modify, watched.clone())]))
        .await
        .unwrap();
    let read_group = |c: &mut P4RuntimeClient<Channel>| {
        let mut c = c.clone();
        async move {
            read(
                &mut c,
                E::ActionProfileGroup(p4v1::ActionProfileGroup {
                    action_profile_id: pid,
                    group_id: 1,
                    ..Default::default()
                }),
            )
            .await
        }
    };
    assert_eq!(read_group(&mut c).await, vec![watched.clone()]);
    assert_eq!(switch_group(&r, &profile, 1), vec![1, 2]);
    let link = |port: u16, up: bool| {
        r.rt.as_ref()
            .unwrap()
            .handle()
            .link(port)
            .unwrap()
            .set_link_up(up)
    };
    link(2, false);
    group_becomes(&r, &profile, 1, &[1]).await;
    assert_eq!(read_group(&mut c).await, vec![watched.clone()]);
    link(2, true);
    group_becomes(&r, &profile, 1, &[1, 2]).await;
    // Written while port 1 is down: member 1 is left out by the write itself.
    link(1, false);
    group_becomes(&r, &profile, 1, &[2]).await;
    let swapped = group([2, 1], 1);
    c.write(write(1, vec![update(Modify, swapped.clone())]))
        .await
        .unwrap();
    assert_eq!(switch_group(&r, &profile, 1), vec![1]);
    assert_eq!(read_group(&mut c).await, vec![swapped]);
    link(1, true);
    group_becomes(&r, &profile, 1, &[1, 2]).await;
    // Without watches the group is plain again.
    c.write(write(1, vec![update(Modify, written[2].clone())]))
        .await
        .unwrap();
    assert_eq!(read_group(&mut c).await, vec![written[2].clone()]);
    // Weighted and watched: member 1 (weight 3) and its replicas leave together.
    let heavy = group([2, 1], 3);
    c.write(write(1, vec![update(Modify, heavy.clone())]))
        .await
        .unwrap();
    assert_eq!(switch_group(&r, &profile, 1).len(), 6);
    link(2, false);
    let held = |r: &Rig| switch_group(r, &profile, 1);
    let mut now = held(&r);
    for _ in 0..500 {
        if now.len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        now = held(&r);
    }
    assert_eq!(now.len(), 3, "{now:?}");
    assert!(!now.contains(&1), "{now:?}");
    assert_eq!(read_group(&mut c).await, vec![heavy]);
    link(2, true);
    // Refused: a watched port that is no device port.
    let mut far = group([1, 2], 1);
    if let E::ActionProfileGroup(g) = &mut far {
        g.members[0].watch_kind = Some(WatchKind::WatchPort(vec![2, 0x58]));
    }
    let st = c
        .write(write(1, vec![update(Modify, far)]))
        .await
        .unwrap_err();
    assert_eq!(details(&st)[0].0, Code::InvalidArgument as i32, "{st:?}");
}

/// Member weights (spec, action profile groups): a member of weight 3 is held three times in
/// the group the switch selects from (itself and two replicas with its action, which follow
/// a MODIFY of the member), reads give the group back as written and show no replica;
/// lowering the weight or deleting the group takes the replicas back; the weighted size is
/// held to the selector's largest group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weighted_group_members_are_held_weight_times() {
    let r = rig_of(compiled("../p4/programs/switch.p4"));
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let written = ecmp_state(&info, &mut c).await;
    let pid = info.action_profiles[0].preamble.as_ref().unwrap().id;
    let profile = info.action_profiles[0]
        .preamble
        .as_ref()
        .unwrap()
        .name
        .clone();
    let group = |id: u32, weights: [i32; 2]| {
        E::ActionProfileGroup(p4v1::ActionProfileGroup {
            action_profile_id: pid,
            group_id: id,
            members: [(1, weights[0]), (2, weights[1])]
                .map(|(m, weight)| p4v1::action_profile_group::Member {
                    member_id: m,
                    weight,
                    watch_kind: None,
                })
                .to_vec(),
            max_size: 0,
        })
    };
    // The next hop of every member the switch holds, by id.
    let next_hops = |r: &Rig| {
        let profile = profile.clone();
        let v =
            r.rt.as_ref()
                .unwrap()
                .handle()
                .each(Duration::from_secs(5), move |sw, _| {
                    sw.profile_read(pipeline::api::PipeSel::All, &profile)
                        .unwrap()
                })
                .unwrap()
                .remove(0);
        v.members
            .iter()
            .map(|(id, _, p)| (*id, p[0].1 as u8))
            .collect::<Vec<_>>()
    };
    let heavy = group(1, [3, 1]);
    c.write(write(1, vec![update(Modify, heavy.clone())]))
        .await
        .unwrap();
    // A MODIFY keeps the positions members had and appends the new ones (the driver's way).
    let held = switch_group(&r, &profile, 1);
    assert_eq!(held.len(), 4, "{held:?}");
    assert_eq!(held[..2], [1, 2], "{held:?}");
    let hops = next_hops(&r);
    for id in &held[2..] {
        assert!(
            hops.contains(&(*id, 11)),
            "replica {id:#x} of member 1: {hops:?}"
        );
    }
    let wild_members = E::ActionProfileMember(p4v1::ActionProfileMember {
        action_profile_id: pid,
        ..Default::default()
    });
    assert_eq!(
        read(&mut c, wild_members.clone()).await,
        written[..2].to_vec()
    );
    let one = E::ActionProfileGroup(p4v1::ActionProfileGroup {
        action_profile_id: pid,
        group_id: 1,
        ..Default::default()
    });
    assert_eq!(read(&mut c, one.clone()).await, vec![heavy]);
    // A MODIFY of member 1 reaches its replicas.
    let mut m1 = written[0].clone();
    if let E::ActionProfileMember(m) = &mut m1 {
        m.action.as_mut().unwrap().params[0].value = vec![21];
    }
    c.write(write(1, vec![update(Modify, m1.clone())]))
        .await
        .unwrap();
    let hops = next_hops(&r);
    for id in [held[0], held[2], held[3]] {
        assert!(hops.contains(&(id, 21)), "{id:#x}: {hops:?}");
    }
    assert_eq!(read(&mut c, wild_members.clone()).await[0], m1);
    // Weight 2: one replica is taken back.
    c.write(write(1, vec![update(Modify, group(1, [2, 1]))]))
        .await
        .unwrap();
    assert_eq!(switch_group(&r, &profile, 1).len(), 3);
    assert_eq!(next_hops(&r).len(), 3);
    // A second weighted group, deleted: its replicas go with it.
    c.write(write(1, vec![update(Insert, group(2, [1, 4]))]))
        .await
        .unwrap();
    assert_eq!(next_hops(&r).len(), 6);
    c.write(write(1, vec![update(Delete, group(2, [1, 4]))]))
        .await
        .unwrap();
    assert_eq!(next_hops(&r).len(), 3);
    // Plain again.
    c.write(write(1, vec![update(Modify, written[2].clone())]))
        .await
        .unwrap();
    assert_eq!(next_hops(&r).len(), 2);
    assert_eq!(read(&mut c, one).await, vec![written[2].clone()]);
    // The selector's groups hold at most 16 (weighted) members; weights are positive.
    for (weights, code) in [
        ([15, 2], Code::ResourceExhausted),
        ([1, -1], Code::InvalidArgument),
    ] {
        let st = c
            .write(write(1, vec![update(Modify, group(1, weights))]))
            .await
            .unwrap_err();
        assert_eq!(details(&st)[0].0, code as i32, "{weights:?}: {st:?}");
    }
}

/// A Read while a long Write runs on the switch (16,384 routes in one atomic batch) is served,
/// not answered UNAVAILABLE, and sees the table before or after the whole batch (spec: reads
/// see a consistent state; the switch thread applies the batch between two packets).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_during_a_long_write_are_served_and_consistent() {
    use p4v1::write_request::Atomicity;
    let r = rig_of(compiled("../p4/programs/switch.p4"));
    let info = r.info.clone();
    let mut c = client(&r).await;
    let (_s, _) = open(&mut c, 1).await;
    let fib = table(&info, "SwitchIngress.ipv4_fib").preamble.unwrap().id;
    const N: u32 = 16384;
    let updates: Vec<p4v1::Update> = (0..N)
        .map(|i| {
            let dst = (0x0a00_0000 | i).to_be_bytes().to_vec();
            update(
                Insert,
                E::TableEntry(p4v1::TableEntry {
                    table_id: fib,
                    r#match: vec![
                        fm(1, F::Exact(p4v1::field_match::Exact { value: vec![0] })),
                        fm(
                            2,
                            F::Lpm(p4v1::field_match::Lpm {
                                value: dst,
                                prefix_len: 32,
                            }),
                        ),
                    ],
                    action: action(&info, "SwitchIngress.fib_nexthop", &[&[1]]),
                    ..Default::default()
                }),
            )
        })
        .collect();
    let req = p4v1::WriteRequest {
        atomicity: Atomicity::RollbackOnError as i32,
        ..write(1, updates)
    };
    let mut w = c.clone();
    let started = std::time::Instant::now();
    let writer = tokio::spawn(async move { w.write(req).await });
    let wild = E::TableEntry(p4v1::TableEntry {
        table_id: fib,
        ..Default::default()
    });
    let mut reads = Vec::new();
    while !writer.is_finished() {
        let got = c
            .read(p4v1::ReadRequest {
                device_id: 1,
                entities: vec![p4v1::Entity {
                    entity: Some(wild.clone()),
                }],
                ..Default::default()
            })
            .await;
        let mut s = got.expect("a read during the write is served").into_inner();
        let mut n = 0;
        while let Some(resp) = s.next().await {
            n += resp
                .expect("a read during the write is served")
                .entities
                .len();
        }
        reads.push(n);
    }
    writer.await.unwrap().unwrap();
    eprintln!(
        "the write took {:?}; reads during it saw {reads:?}",
        started.elapsed()
    );
    assert!(
        reads.iter().all(|n| *n == 0 || *n == N as usize),
        "{reads:?}"
    );
    assert_eq!(read(&mut c, wild).await.len(), N as usize);
}
