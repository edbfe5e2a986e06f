/* Two Pipeline instances of one program behind `Switch(pipe0, pipe1)`, a parser-local variable,
 * header copies and header initializers, an egress mirror and an indexed direct action call. */
#include "../head.p4inc"

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    bit<16> ethertype = 0;

    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        ethertype = hdr.ethernet.ether_type;
        meta.a16 = ethertype;
        transition select(ethertype, hdr.ethernet.dst_addr[40:40]) {
            (0x0800, 0) : parse_ipv4;
            (0x0800, 1) : parse_ipv4;
            (_, _) : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action to_port(PortId_t p) {
        ig_tm_md.ucast_egress_port = p;
    }
    apply {
        to_port(ig_intr_md.ingress_port ^ 1);
        hdr.vlan[0] = { 0x0001, hdr.ethernet.ether_type };
        hdr.vlan[1] = hdr.vlan[0];
        hdr.ethernet.ether_type = 0x8100;
        meta.flag = hdr.ipv4.isValid() && hdr.ipv4.ttl > 1;
        meta.b8 = meta.flag ? 8w1 : 8w0;
    }
}

control IngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                        in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser EgressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                    out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout metadata_t meta,
               in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        if (eg_intr_md.egress_rid != 0) {
            eg_dprsr_md.mirror_type = 2;
        }
    }
}

control EgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                       in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror() mirror;
    apply {
        if (eg_dprsr_md.mirror_type == 2) {
            mirror.emit(7);
        }
        pkt.emit(hdr);
    }
}

Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe0;
Pipeline(IngressParser(), Ingress(), IngressDeparser(),
         EgressParser(), Egress(), EgressDeparser()) pipe1;

Switch(pipe0, pipe1) main;
