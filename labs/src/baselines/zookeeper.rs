//! A ZooKeeper ensemble on loopback (server `i`: clients on port `41000 + 10 i`, quorum on
//! `+1`, leader election on `+2`), started from the Debian package's jar, written to through
//! [`super::jute`]: each write is a `setData` of `/ycsb/user<key>`, or its `create` when the
//! node does not exist yet. One session per client, requests one at a time.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use hosts::acuerdo::ycsb::Ycsb;

use super::cluster::{find, Cluster};
use super::jute;
use super::{drive, BaselineError, Writer};
use crate::acuerdo::ycsb::YcsbReport;

fn client_port(i: usize) -> u16 {
    41_000 + 10 * i as u16
}

/// Largest reply frame read.
const MAX_FRAME: usize = 1 << 20;

/// One session.
pub struct ZkWriter {
    s: TcpStream,
    xid: i32,
}

fn io(what: &str) -> impl Fn(std::io::Error) -> BaselineError + '_ {
    move |e| BaselineError::Client(format!("zookeeper {what}: {e}"))
}

impl ZkWriter {
    /// Opens a session with the server on `port`.
    pub fn connect(port: u16) -> Result<ZkWriter, BaselineError> {
        let s = TcpStream::connect(("127.0.0.1", port)).map_err(io("connect"))?;
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(io("connect"))?;
        s.set_nodelay(true).map_err(io("connect"))?;
        let mut w = ZkWriter { s, xid: 0 };
        w.s.write_all(&jute::connect_request(30_000))
            .map_err(io("connect"))?;
        let body = w.frame()?;
        jute::connect_response(&body).map_err(BaselineError::Client)?;
        Ok(w)
    }

    fn frame(&mut self) -> Result<Vec<u8>, BaselineError> {
        let mut head = [0u8; 4];
        self.s.read_exact(&mut head).map_err(io("read"))?;
        let n = jute::frame_len(head, MAX_FRAME).map_err(BaselineError::Client)?;
        let mut body = vec![0u8; n];
        self.s.read_exact(&mut body).map_err(io("read"))?;
        Ok(body)
    }

    /// Sends one request and returns its reply's error code (0: done).
    fn call(&mut self, req: impl Fn(i32) -> Vec<u8>) -> Result<i32, BaselineError> {
        self.xid += 1;
        self.s.write_all(&req(self.xid)).map_err(io("write"))?;
        loop {
            let body = self.frame()?;
            let h = jute::reply_header(&body).map_err(BaselineError::Client)?;
            if h.xid == self.xid {
                return Ok(h.err);
            }
            // A watch event or a ping's answer: not ours.
        }
    }

    /// Creates `path` (an existing one is fine).
    pub fn ensure(&mut self, path: &str) -> Result<(), BaselineError> {
        match self.call(|x| jute::create(x, path, b""))? {
            0 | jute::ERR_NODE_EXISTS => Ok(()),
            e => Err(BaselineError::Client(format!(
                "zookeeper create {path}: error {e}"
            ))),
        }
    }
}

impl Writer for ZkWriter {
    fn write(&mut self, key: u64, value: &[u8]) -> Result<(), BaselineError> {
        let path = format!("/ycsb/user{key}");
        for _ in 0..3 {
            match self.call(|x| jute::set_data(x, &path, value))? {
                0 => return Ok(()),
                jute::ERR_NO_NODE => {}
                e => {
                    return Err(BaselineError::Client(format!(
                        "zookeeper setData: error {e}"
                    )))
                }
            }
            match self.call(|x| jute::create(x, &path, value))? {
                0 => return Ok(()),
                jute::ERR_NODE_EXISTS => {} // another client created it: set it
                e => {
                    return Err(BaselineError::Client(format!(
                        "zookeeper create: error {e}"
                    )))
                }
            }
        }
        Err(BaselineError::Client(format!(
            "zookeeper: {path} keeps appearing and vanishing"
        )))
    }
}

/// Starts `nodes` ZooKeeper servers, runs the writes, stops them.
pub fn run(nodes: usize, ops: usize, w: Ycsb, clients: usize) -> Result<YcsbReport, BaselineError> {
    let java = find("java", &["/usr/bin/java"], "default-jre-headless")?;
    let jar = find(
        "zookeeper.jar",
        &["/usr/share/java/zookeeper.jar"],
        "zookeeper",
    )?;
    let mut cl = Cluster::new("zookeeper")?;
    for i in 0..nodes {
        let data = cl.dir.join(format!("n{i}"));
        std::fs::create_dir_all(&data)
            .map_err(|e| BaselineError::Io(data.display().to_string(), e))?;
        std::fs::write(data.join("myid"), format!("{}\n", i + 1))
            .map_err(|e| BaselineError::Io("myid".into(), e))?;
        let mut cfg = format!(
            "tickTime=200\ninitLimit=50\nsyncLimit=25\ndataDir={}\nclientPort={}\nadmin.enableServer=false\nmaxClientCnxns=0\n",
            data.display(),
            client_port(i)
        );
        if nodes > 1 {
            for j in 0..nodes {
                let p = client_port(j);
                cfg.push_str(&format!("server.{}=127.0.0.1:{}:{}\n", j + 1, p + 1, p + 2));
            }
        }
        let file = data.join("zoo.cfg");
        std::fs::write(&file, cfg).map_err(|e| BaselineError::Io(file.display().to_string(), e))?;
        let mut cmd = Command::new(&java);
        cmd.arg("-Xmx512m")
            .arg("-cp")
            .arg(&jar)
            .arg("org.apache.zookeeper.server.quorum.QuorumPeerMain")
            .arg(&file);
        cl.spawn(&format!("zookeeper-n{i}"), cmd)?;
    }
    for i in 0..nodes {
        cl.wait(Duration::from_secs(60), || {
            let mut z = ZkWriter::connect(client_port(i))?;
            z.ensure("/ycsb")
        })?;
    }
    let r = drive("zookeeper", nodes, ops, w, clients, |c| {
        ZkWriter::connect(client_port(c % nodes))
    });
    drop(cl);
    r
}
