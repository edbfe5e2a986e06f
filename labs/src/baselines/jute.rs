//! The few ZooKeeper client messages the bench needs, in ZooKeeper's Jute encoding
//! (big-endian integers, length-prefixed strings and buffers, each message behind a 4-byte
//! length): the session's ConnectRequest and its response, and `create` and `setData`
//! requests with the reply header that answers them. Replies come from a server: they are
//! checked, and a bad one is an error, never a panic.

/// Request type of `create`.
pub const OP_CREATE: i32 = 1;
/// Request type of `setData`.
pub const OP_SET_DATA: i32 = 5;
/// Error code: no such node.
pub const ERR_NO_NODE: i32 = -101;
/// Error code: the node exists.
pub const ERR_NODE_EXISTS: i32 = -110;

fn put_i32(b: &mut Vec<u8>, v: i32) {
    b.extend_from_slice(&v.to_be_bytes());
}

fn put_bytes(b: &mut Vec<u8>, v: &[u8]) {
    put_i32(b, v.len() as i32);
    b.extend_from_slice(v);
}

/// Puts the 4-byte length before `body`.
fn framed(body: Vec<u8>) -> Vec<u8> {
    let mut f = Vec::with_capacity(body.len() + 4);
    put_i32(&mut f, body.len() as i32);
    f.extend_from_slice(&body);
    f
}

/// The ConnectRequest of a new session with timeout `timeout_ms`.
pub fn connect_request(timeout_ms: i32) -> Vec<u8> {
    let mut b = Vec::new();
    put_i32(&mut b, 0); // protocol version
    b.extend_from_slice(&0i64.to_be_bytes()); // last zxid seen
    put_i32(&mut b, timeout_ms);
    b.extend_from_slice(&0i64.to_be_bytes()); // session id
    put_bytes(&mut b, &[0; 16]); // password
    b.push(0); // read-only: no
    framed(b)
}

/// A `create` of a persistent node open to everyone.
pub fn create(xid: i32, path: &str, data: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    put_i32(&mut b, xid);
    put_i32(&mut b, OP_CREATE);
    put_bytes(&mut b, path.as_bytes());
    put_bytes(&mut b, data);
    put_i32(&mut b, 1); // one ACL: world:anyone, all permissions
    put_i32(&mut b, 31);
    put_bytes(&mut b, b"world");
    put_bytes(&mut b, b"anyone");
    put_i32(&mut b, 0); // persistent
    framed(b)
}

/// A `setData` of any version.
pub fn set_data(xid: i32, path: &str, data: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    put_i32(&mut b, xid);
    put_i32(&mut b, OP_SET_DATA);
    put_bytes(&mut b, path.as_bytes());
    put_bytes(&mut b, data);
    put_i32(&mut b, -1);
    framed(b)
}

/// A reply's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyHeader {
    /// The request's xid (-1: a watch event, -2: a ping's answer).
    pub xid: i32,
    /// The transaction id.
    pub zxid: i64,
    /// 0, or an error code.
    pub err: i32,
}

/// Parses a reply's header (the frame's body, without the length).
pub fn reply_header(body: &[u8]) -> Result<ReplyHeader, String> {
    if body.len() < 16 {
        return Err(format!("reply of {} bytes, 16 needed", body.len()));
    }
    let i32_at =
        |at: usize| i32::from_be_bytes([body[at], body[at + 1], body[at + 2], body[at + 3]]);
    let mut z = [0u8; 8];
    z.copy_from_slice(&body[4..12]);
    Ok(ReplyHeader {
        xid: i32_at(0),
        zxid: i64::from_be_bytes(z),
        err: i32_at(12),
    })
}

/// Checks a ConnectResponse (the frame's body): returns the session's timeout.
pub fn connect_response(body: &[u8]) -> Result<i32, String> {
    if body.len() < 16 {
        return Err(format!("connect response of {} bytes", body.len()));
    }
    let timeout = i32::from_be_bytes([body[4], body[5], body[6], body[7]]);
    if timeout <= 0 {
        return Err("session refused (timeout 0)".into());
    }
    Ok(timeout)
}

/// The length of the frame that `head` (its first 4 bytes) announces, checked against
/// `max`.
pub fn frame_len(head: [u8; 4], max: usize) -> Result<usize, String> {
    let n = i32::from_be_bytes(head);
    if n < 0 || n as usize > max {
        return Err(format!("frame of {n} bytes (at most {max})"));
    }
    Ok(n as usize)
}

/// The fuzz target's body (`fuzz/targets/src/labs_zk_jute.rs`): arbitrary bytes as the
/// frames a ZooKeeper server could send; never a panic.
#[doc(hidden)]
pub fn fuzz_replies(data: &[u8]) {
    let _ = reply_header(data);
    let _ = connect_response(data);
    if data.len() >= 4 {
        let _ = frame_len([data[0], data[1], data[2], data[3]], MAX_FUZZ_FRAME);
    }
}

const MAX_FUZZ_FRAME: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_framed_and_replies_checked() {
        let c = create(7, "/a", b"xy");
        assert_eq!(
            frame_len([c[0], c[1], c[2], c[3]], 1 << 20).unwrap(),
            c.len() - 4
        );
        assert_eq!(&c[4..12], &[0, 0, 0, 7, 0, 0, 0, 1]);
        let mut r = vec![0, 0, 0, 7];
        r.extend_from_slice(&5i64.to_be_bytes());
        r.extend_from_slice(&ERR_NODE_EXISTS.to_be_bytes());
        let h = reply_header(&r).unwrap();
        assert_eq!((h.xid, h.zxid, h.err), (7, 5, ERR_NODE_EXISTS));
        assert!(reply_header(&r[..10]).is_err());
        assert!(frame_len((-1i32).to_be_bytes(), 100).is_err());
        assert!(connect_response(&[0; 8]).is_err());
    }
}
