/* Varbit lengths bf-p4c turns into parser states: one from the IHL, quiet; one that reads the
   same slice twice, compiled (pisa enumerates its one variable) with a warning that bf-p4c
   counts each read as a variable. Each varbit extract is the last extract of its state; a
   second varbit header in the next state is fine. */
#define CUSTOM_PARSER
#include "../head.p4inc"

header opt_h { varbit<320> data; }

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    opt_h opts;
    opt_h more;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        pkt.extract(opts, (bit<32>)(((bit<16>)hdr.ipv4.ihl - 5) * 32));
        transition parse_more;
    }
    state parse_more {
        pkt.extract(more, (bit<32>)hdr.ipv4.ttl[3:0] * 8 + (bit<32>)hdr.ipv4.ttl[3:0] * 8);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; }
}

#include "../tail.p4inc"
