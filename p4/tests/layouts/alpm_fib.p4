/* A FIB the way large TNA programs write one: an exact host table, then an ALPM route table
   of 256K prefixes (too many for the TCAMs of all 12 stages, but an ATCAM in SRAM behind a
   pre-classifier fits), a control whose constructor parameter picks one of two apply orders,
   and the route table applied on both sides of that `if`. LPM_LAYOUT is the route table's
   `implementation` line (empty: a plain TCAM table), LPM_ANNOTATIONS the annotations written
   before it (bf-p4c's `@alpm(1)` pragmas are the other spelling of the layout); HOST_FIRST the
   `if`'s condition. */
#include <core.p4>
#include <tna.p4>

#ifndef LPM_LAYOUT
#define LPM_LAYOUT implementation = algo_lpm;
#endif
#ifndef LPM_ANNOTATIONS
#define LPM_ANNOTATIONS
#endif
/* The condition choosing the apply order: the constructor parameter, or a run-time one. */
#ifndef HOST_FIRST
#define HOST_FIRST host_first
#endif

header ipv4_h {
    bit<8>  ttl;
    bit<8>  protocol;
    bit<32> dst_addr;
}
struct headers_t { ipv4_h ipv4; }
struct meta_t {
    bit<8>  vrf;
    bit<16> nexthop;
}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control Fib(in bit<32> dst_addr, inout meta_t m)(bit<32> host_size, bit<32> lpm_size,
                                                 bool host_first) {
    action hit(bit<16> nexthop) { m.nexthop = nexthop; }
    action miss() { m.nexthop = 0; }
    table host {
        key = { m.vrf : exact; dst_addr : exact; }
        actions = { hit; miss; }
        const default_action = miss;
        size = host_size;
    }
    Alpm(number_partitions = 2048, subtrees_per_partition = 2,
         atcam_subset_width = 18, shift_granularity = 1) algo_lpm;
    LPM_ANNOTATIONS
    table lpm {
        key = { m.vrf : exact; dst_addr : lpm; }
        actions = { hit; miss; }
        const default_action = miss;
        size = lpm_size;
        LPM_LAYOUT
    }
    apply {
        if (HOST_FIRST) {
            if (!host.apply().hit) {
                lpm.apply();
            }
        } else {
            lpm.apply();
        }
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Fib(65536, 262144, true) fib;
    apply {
        fib.apply(hdr.ipv4.dst_addr, m);
        ig_tm_md.ucast_egress_port = (PortId_t)m.nexthop[8:0];
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) { apply {} }
control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t d) { apply {} }

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
