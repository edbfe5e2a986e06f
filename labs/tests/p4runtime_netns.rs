//! A lab switch that serves P4Runtime has packet I/O on its CPU port (root): in a namespace
//! lab running control/tests/data/cpu_punt.p4, a ping from h1 reaches the controller as a
//! packet-in naming h1's port, and a packet-out leaves on h2's port.

use std::path::Path;
use std::time::Duration;

use control::p4runtime::proto::p4::v1 as p4v1;
use control::p4runtime::proto::p4::v1::p4_runtime_client::P4RuntimeClient;
use labs::netns::{NetnsLab, NetnsSwitches};
use labs::topology::{End, Topology};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;

const LAB: &str = "p4rtio";

fn topology() -> Topology {
    let text = format!(
        "name: {LAB}\nifprefix: p4io\ndefaults:\n  program: ../../control/tests/data/cpu_punt.p4\n  \
         target: tofino1\nswitches:\n  - {{ name: sw }}\nhosts:\n  \
         - {{ name: h1, ipv4: 10.0.9.1/24 }}\n  - {{ name: h2, ipv4: 10.0.9.2/24 }}\nlinks:\n  \
         - {{ a: h1, b: \"sw:3\" }}\n  - {{ a: h2, b: \"sw:5\" }}\n"
    );
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/labs/p4rtio.yaml");
    Topology::from_yaml(&text, &file).unwrap_or_else(|e| panic!("{e}"))
}

fn devport(topo: &Topology, host: usize) -> u16 {
    let l = &topo.links[topo.hosts[host].link];
    match (l.a, l.b) {
        (End::Switch { devport, .. }, _) | (_, End::Switch { devport, .. }) => devport,
        _ => panic!("host {host} is not cabled to the switch"),
    }
}

/// Takes the lab down on drop, whatever happened.
struct Down;

impl Drop for Down {
    fn drop(&mut self) {
        let _ = dataplane::lab::lab_down(LAB);
    }
}

#[test]
#[ignore = "needs root (network namespaces, veth pairs, AF_PACKET) and ping"]
fn lab_switches_have_packet_io_over_p4runtime() {
    assert!(dataplane::netns::is_root(), "this test needs root");
    let _ = dataplane::lab::lab_down(LAB);
    let topo = topology();
    let (p1, p2) = (devport(&topo, 0), devport(&topo, 1));
    let _down = Down;
    let lab = NetnsLab::up(&topo).unwrap_or_else(|e| panic!("{e}"));
    let addr: std::net::SocketAddr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let switches = NetnsSwitches::start(&topo, false, Some(addr)).unwrap_or_else(|e| panic!("{e}"));
    let (_, served) = switches.p4runtime_addrs()[0];
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = P4RuntimeClient::connect(format!("http://{served}"))
            .await
            .unwrap();
        let info = c
            .get_forwarding_pipeline_config(p4v1::GetForwardingPipelineConfigRequest {
                device_id: 1,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .config
            .and_then(|c| c.p4info)
            .unwrap();
        let id = |name: &str| {
            info.tables
                .iter()
                .filter_map(|t| t.preamble.as_ref())
                .chain(info.actions.iter().filter_map(|a| a.preamble.as_ref()))
                .find(|p| p.name == name)
                .unwrap_or_else(|| panic!("no {name}"))
                .id
        };
        let (tx, rx) = mpsc::channel(8);
        tx.send(arbitration()).await.unwrap();
        let mut stream = c
            .stream_channel(ReceiverStream::new(rx))
            .await
            .unwrap()
            .into_inner();
        stream.next().await.unwrap().unwrap(); // the arbitration answer
                                               // IPv4 frames go to the CPU port.
        let punt = p4v1::TableEntry {
            table_id: id("Ig.punt"),
            r#match: vec![p4v1::FieldMatch {
                field_id: 1,
                field_match_type: Some(p4v1::field_match::FieldMatchType::Exact(
                    p4v1::field_match::Exact {
                        value: vec![0x08, 0x00],
                    },
                )),
            }],
            action: Some(p4v1::TableAction {
                r#type: Some(p4v1::table_action::Type::Action(p4v1::Action {
                    action_id: id("Ig.to_cpu"),
                    params: vec![],
                })),
            }),
            ..Default::default()
        };
        c.write(p4v1::WriteRequest {
            device_id: 1,
            election_id: Some(p4v1::Uint128 { high: 0, low: 1 }),
            updates: vec![p4v1::Update {
                r#type: p4v1::update::Type::Insert as i32,
                entity: Some(p4v1::Entity {
                    entity: Some(p4v1::entity::Entity::TableEntry(punt)),
                }),
            }],
            ..Default::default()
        })
        .await
        .unwrap();
        let ns = format!("pisa-{LAB}-h1");
        let ping = std::process::Command::new("ip")
            .args([
                "netns", "exec", &ns, "ping", "-c", "1", "-W", "1", "10.0.9.2",
            ])
            .output()
            .unwrap();
        assert!(!ping.status.success(), "the switch punts, nobody answers");
        let packet = loop {
            let m = tokio::time::timeout(Duration::from_secs(5), stream.next())
                .await
                .expect("no packet-in within 5 s")
                .unwrap()
                .unwrap();
            if let Some(p4v1::stream_message_response::Update::Packet(p)) = m.update {
                break p;
            }
        };
        assert_eq!(packet.payload[12..14], [0x08, 0x00], "the ping, punted");
        let port = packet.metadata.iter().find(|m| m.metadata_id == 1).unwrap();
        // P4Runtime's canonical form: the shortest bytestring holding the value.
        let be = p1.to_be_bytes();
        let first = be.iter().position(|&b| b != 0).unwrap_or(be.len() - 1);
        assert_eq!(port.value, be[first..].to_vec(), "ingress_port = h1's");
        // A packet-out leaves on h2's port.
        let before = tx_of(&switches, p2);
        let out = p4v1::PacketOut {
            payload: packet.payload.clone(),
            metadata: vec![p4v1::PacketMetadata {
                metadata_id: 1,
                value: p2.to_be_bytes().to_vec(),
            }],
        };
        tx.send(p4v1::StreamMessageRequest {
            update: Some(p4v1::stream_message_request::Update::Packet(out)),
        })
        .await
        .unwrap();
        let mut sent = false;
        for _ in 0..100 {
            if tx_of(&switches, p2) > before {
                sent = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(sent, "no frame left on h2's port {p2}");
    });
    switches.stop().unwrap();
    lab.down().unwrap();
}

fn arbitration() -> p4v1::StreamMessageRequest {
    p4v1::StreamMessageRequest {
        update: Some(p4v1::stream_message_request::Update::Arbitration(
            p4v1::MasterArbitrationUpdate {
                device_id: 1,
                election_id: Some(p4v1::Uint128 { high: 0, low: 1 }),
                ..Default::default()
            },
        )),
    }
}

fn tx_of(s: &NetnsSwitches, devport: u16) -> u64 {
    s.counters()
        .values()
        .flat_map(|c| c.ports.iter())
        .filter(|p| p.devport == devport)
        .map(|p| p.tx)
        .sum()
}
