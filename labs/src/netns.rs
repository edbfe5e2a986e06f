//! The namespace driver (below).
