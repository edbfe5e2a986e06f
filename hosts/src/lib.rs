//! Host-side protocols of the seed systems, built on the userspace RDMA endpoint.
