//! Traffic manager (placeholder while being written).
