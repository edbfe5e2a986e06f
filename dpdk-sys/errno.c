/* pisa-dpdk-sys: rte_errno is a per-lcore thread-local macro, not something Rust can name;
 * this accessor reads it. */
#include <rte_errno.h>

int pisa_dpdk_errno(void) { return rte_errno; }
