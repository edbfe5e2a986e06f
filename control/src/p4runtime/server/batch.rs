//! The answer to a Write whose updates did not all apply: UNKNOWN with one `p4.v1.Error` per
//! update in a `google.rpc.Status` (the spec's error report of a batch), kept under gRPC's
//! metadata limits.

use prost::Message;
use tonic::{Code, Status};

use super::super::codec::P4Error;
use super::super::proto::google::rpc;
use super::super::proto::p4::v1 as p4v1;

/// The most bytes of encoded `google.rpc.Status` a batch's reply carries: it travels base64
/// in the `grpc-status-details-bin` trailer, and gRPC clients refuse metadata over 16 KiB (8 KiB
/// their soft limit), so it stays well under 8 KiB once encoded.
const DETAILS_BUDGET: usize = 5 * 1024;
/// The most characters of one update's error message in the details.
const DETAIL_MESSAGE_CHARS: usize = 300;
/// Failures quoted in the summary of a batch whose details do not fit.
const SUMMARY_FAILURES: usize = 5;

fn any<M: Message>(type_name: &str, m: &M) -> prost_types::Any {
    prost_types::Any {
        type_url: format!("type.googleapis.com/{type_name}"),
        value: m.encode_to_vec(),
    }
}

/// The gRPC status of a batch with failed updates: UNKNOWN, with one `p4.v1.Error` per update
/// (OK for those that were applied) in a `google.rpc.Status`. Messages are cut to
/// [`DETAIL_MESSAGE_CHARS`]; when the details would still pass [`DETAILS_BUDGET`], the
/// messages of the updates rolled back (ABORTED) are left out, and if that is not enough there
/// are no details and the status message sums the failures up (the first few quoted).
pub fn batch_status(results: &[Result<(), P4Error>]) -> Status {
    let failed = results.iter().filter(|r| r.is_err()).count();
    let details = |aborted_text: bool| -> Vec<prost_types::Any> {
        results
            .iter()
            .map(|r| {
                let e = match r {
                    Ok(()) => p4v1::Error::default(),
                    Err(e) => p4v1::Error {
                        canonical_code: e.code as i32,
                        message: if aborted_text || e.code != Code::Aborted {
                            p4::diag::bounded_to(&e.message, DETAIL_MESSAGE_CHARS).into_owned()
                        } else {
                            String::new()
                        },
                        ..Default::default()
                    },
                };
                any("p4.v1.Error", &e)
            })
            .collect()
    };
    let message = format!("{failed} of {} update(s) failed", results.len());
    let fits = |details: Vec<prost_types::Any>| {
        let st = rpc::Status {
            code: Code::Unknown as i32,
            message: message.clone(),
            details,
        };
        let bytes = st.encode_to_vec();
        (bytes.len() <= DETAILS_BUDGET).then_some(bytes)
    };
    if let Some(bytes) = fits(details(true)).or_else(|| fits(details(false))) {
        return Status::with_details(Code::Unknown, message, bytes.into());
    }
    Status::new(Code::Unknown, batch_summary(results, &message))
}

/// A status message for a batch whose per-update details are too large for gRPC's metadata:
/// the count, the first [`SUMMARY_FAILURES`] failures (update index, code, message) and the
/// count of failures per code.
fn batch_summary(results: &[Result<(), P4Error>], head: &str) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "{head} (per-update details left out: they would pass gRPC's metadata limit); first \
         failures:"
    );
    let failures = results
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.as_ref().err().map(|e| (i, e)));
    for (i, e) in failures.clone().take(SUMMARY_FAILURES) {
        let msg = p4::diag::bounded_to(&e.message, DETAIL_MESSAGE_CHARS / 2);
        let _ = write!(out, " update {i}: {:?}: {msg};", e.code);
    }
    let mut per_code: Vec<(String, usize)> = Vec::new();
    for (_, e) in failures {
        let code = format!("{:?}", e.code);
        match per_code.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => per_code.push((code, 1)),
        }
    }
    let counts: Vec<String> = per_code.iter().map(|(c, n)| format!("{n} {c}")).collect();
    let _ = write!(out, " failures by code: {}", counts.join(", "));
    out
}
