//! The control plane: runtime API clients, table files, STF tests and program control planes.
