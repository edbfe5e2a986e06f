/* Compiled by `pisa` together with the C that rte_swx_pipeline_codegen wrote for a spec, into the
 * shared library that rte_swx_pipeline_build_from_lib loads (dataplane/src/swx/compiled.rs).
 *
 * build_from_lib takes its ports from an I/O spec naming DPDK's own port types only. The pipeline
 * is built with placeholder ports from that spec; this then points each port's runtime entry (the
 * functions the pipeline calls per packet) at pisa's in-memory ports, which feed frames from
 * memory and collect what the pipeline sends. The placeholders stay registered and are freed
 * with the pipeline. The drop port the build adds after the spec's ports (a sink, for `drop`)
 * is left alone: pisa's specs never `drop` (they send to a port of their own instead). */
#include <errno.h>
#include "rte_swx_pipeline_internal.h"

int
pisa_swx_attach_ports(struct rte_swx_pipeline *p,
		      uint32_t n_in,
		      rte_swx_port_in_pkt_rx_t rx,
		      void **in_objs,
		      uint32_t n_out,
		      rte_swx_port_out_pkt_tx_t tx,
		      rte_swx_port_out_pkt_fast_clone_tx_t fast_clone_tx,
		      rte_swx_port_out_pkt_clone_tx_t clone_tx,
		      void **out_objs)
{
	uint32_t i;

	if (!p || n_in != p->n_ports_in || n_out > p->n_ports_out)
		return -EINVAL;

	for (i = 0; i < n_in; i++) {
		p->in[i].pkt_rx = rx;
		p->in[i].obj = in_objs[i];
	}

	for (i = 0; i < n_out; i++) {
		p->out[i].pkt_tx = tx;
		p->out[i].pkt_fast_clone_tx = fast_clone_tx;
		p->out[i].pkt_clone_tx = clone_tx;
		p->out[i].flush = NULL;
		p->out[i].obj = out_objs[i];
	}

	return 0;
}
