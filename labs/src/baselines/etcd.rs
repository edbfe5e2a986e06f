//! An etcd cluster on loopback (server `i` serves clients on port `40000 + 10 i`, peers on
//! `40001 + 10 i`), written to through the v3 JSON gateway (`POST /v3/kv/put` with
//! base64 key and value) over HTTP/1.1, one keep-alive connection per client.

use std::process::Command;
use std::time::Duration;

use base64::Engine;
use hosts::acuerdo::ycsb::Ycsb;

use super::cluster::{find, Cluster};
use super::{drive, BaselineError, Writer};
use crate::acuerdo::ycsb::YcsbReport;

fn client_port(i: usize) -> u16 {
    40_000 + 10 * i as u16
}

/// One client: puts through server `i % n`.
pub struct EtcdWriter {
    agent: ureq::Agent,
    url: String,
}

impl EtcdWriter {
    fn new(port: u16) -> EtcdWriter {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(10)))
            .build()
            .into();
        EtcdWriter {
            agent,
            url: format!("http://127.0.0.1:{port}/v3/kv/put"),
        }
    }
}

impl Writer for EtcdWriter {
    fn write(&mut self, key: u64, value: &[u8]) -> Result<(), BaselineError> {
        let b64 = base64::engine::general_purpose::STANDARD;
        let body = format!(
            "{{\"key\":\"{}\",\"value\":\"{}\"}}",
            b64.encode(format!("user{key}")),
            b64.encode(value)
        );
        let mut resp = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .send(body.as_str())
            .map_err(|e| BaselineError::Client(format!("etcd put: {e}")))?;
        let text = resp
            .body_mut()
            .read_to_string()
            .map_err(|e| BaselineError::Client(format!("etcd put reply: {e}")))?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| BaselineError::Client(format!("etcd put reply {text:?}: {e}")))?;
        if v.get("header").is_none() {
            return Err(BaselineError::Client(format!("etcd put refused: {text}")));
        }
        Ok(())
    }
}

/// Starts `nodes` etcd servers, runs the writes, stops them.
pub fn run(nodes: usize, ops: usize, w: Ycsb, clients: usize) -> Result<YcsbReport, BaselineError> {
    let etcd = find("etcd", &["/usr/bin/etcd"], "etcd-server")?;
    let mut cl = Cluster::new("etcd")?;
    let peer = |i: usize| format!("http://127.0.0.1:{}", client_port(i) + 1);
    let initial: Vec<String> = (0..nodes).map(|i| format!("n{i}={}", peer(i))).collect();
    for i in 0..nodes {
        let client = format!("http://127.0.0.1:{}", client_port(i));
        let mut cmd = Command::new(&etcd);
        cmd.args(["--name", &format!("n{i}")])
            .arg("--data-dir")
            .arg(cl.dir.join(format!("n{i}")))
            .args(["--listen-client-urls", &client])
            .args(["--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer(i)])
            .args(["--initial-advertise-peer-urls", &peer(i)])
            .args(["--initial-cluster", &initial.join(",")])
            .args(["--initial-cluster-state", "new"])
            .args(["--initial-cluster-token", "pisa-ycsb"]);
        cl.spawn(&format!("etcd-n{i}"), cmd)?;
    }
    for i in 0..nodes {
        let mut probe = EtcdWriter::new(client_port(i));
        cl.wait(Duration::from_secs(30), || probe.write(u64::MAX, b"ready"))?;
    }
    let r = drive("etcd", nodes, ops, w, clients, |c| {
        Ok(EtcdWriter::new(client_port(c % nodes)))
    });
    drop(cl);
    r
}
