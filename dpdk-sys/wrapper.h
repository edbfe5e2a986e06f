/* The DPDK headers pisa's DPDK port needs; build.rs runs bindgen over this file. */
#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_dev.h>
#include <rte_bus.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_mbuf.h>
#include <rte_ethdev.h>
#include <rte_ring.h>
#include <rte_swx_pipeline.h>
#include <rte_swx_ctl.h>
int pisa_dpdk_errno(void);
