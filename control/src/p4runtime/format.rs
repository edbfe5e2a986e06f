//! P4Runtime messages in the protobuf text and JSON formats (what `pisa p4info --format` writes
//! and p4runtime-shell's `--config P4INFO.txt,...` reads), through the descriptors of pisa's own
//! protocol definitions.

use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage};

use super::proto::DESCRIPTORS;

/// A message could not be converted.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("the built-in P4Runtime descriptors do not load: {0}")]
    Descriptors(String),
    #[error("no message `{0}` in the P4Runtime descriptors")]
    UnknownMessage(String),
    #[error("{0}")]
    Decode(String),
}

fn dynamic<M: Message>(full_name: &str, msg: &M) -> Result<DynamicMessage, FormatError> {
    let pool =
        DescriptorPool::decode(DESCRIPTORS).map_err(|e| FormatError::Descriptors(e.to_string()))?;
    let desc = pool
        .get_message_by_name(full_name)
        .ok_or_else(|| FormatError::UnknownMessage(full_name.to_string()))?;
    DynamicMessage::decode(desc, msg.encode_to_vec().as_slice())
        .map_err(|e| FormatError::Decode(e.to_string()))
}

/// `msg` (of protobuf type `full_name`, e.g. `p4.config.v1.P4Info`) in the text format.
pub fn to_text<M: Message>(full_name: &str, msg: &M) -> Result<String, FormatError> {
    let d = dynamic(full_name, msg)?;
    let opts = prost_reflect::text_format::FormatOptions::new().pretty(true);
    Ok(d.to_text_format_with_options(&opts))
}

/// `msg` in protobuf's JSON mapping.
pub fn to_json<M: Message>(full_name: &str, msg: &M) -> Result<String, FormatError> {
    let d = dynamic(full_name, msg)?;
    serde_json::to_string_pretty(&d).map_err(|e| FormatError::Decode(e.to_string()))
}

/// Reads a message of type `full_name` from the text format.
pub fn from_text<M: Message + Default>(full_name: &str, text: &str) -> Result<M, FormatError> {
    let pool =
        DescriptorPool::decode(DESCRIPTORS).map_err(|e| FormatError::Descriptors(e.to_string()))?;
    let desc = pool
        .get_message_by_name(full_name)
        .ok_or_else(|| FormatError::UnknownMessage(full_name.to_string()))?;
    let d = DynamicMessage::parse_text_format(desc, text)
        .map_err(|e| FormatError::Decode(e.to_string()))?;
    M::decode(d.encode_to_vec().as_slice()).map_err(|e| FormatError::Decode(e.to_string()))
}
