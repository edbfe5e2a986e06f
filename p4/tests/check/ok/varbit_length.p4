/* A varbit length bf-p4c cannot turn into parser states (it reads two fields): compiled, with
   a warning that pisa evaluates it as written; a length from one field (the IHL) is quiet. */
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
        pkt.extract(more, (bit<32>)(hdr.ipv4.ttl + hdr.ipv4.protocol) * 8);
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
