/* Varbit extracts bf-p4c refuses in a parser state (midend/desugar_varbit_extract.cpp,
   CollectVarbitExtract::preorder and enumerate_varbit_field_values): two varbit extracts in
   one state, a header extracted after the state's varbit one, and a length that reads two
   variables: two fields, or two different slices of one field. */
#define CUSTOM_PARSER
#include "../head.p4inc"

header opt_h { varbit<64> data; }

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    opt_h a;
    opt_h b;
    opt_h c;
    opt_h d;
    opt_h e;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.ipv4);
        pkt.extract(a, (bit<32>)hdr.ipv4.ttl[2:0] * 8);
        pkt.extract(b, (bit<32>)hdr.ipv4.protocol[2:0] * 8);
        transition two;
    }
    state two {
        pkt.extract(c, (bit<32>)hdr.ipv4.ihl[2:0] * 8);
        pkt.extract(hdr.vlan.next);
        transition three;
    }
    state three {
        pkt.extract(d, ((bit<32>)hdr.ipv4.ttl[1:0] + (bit<32>)hdr.ipv4.protocol[1:0]) * 8);
        transition four;
    }
    state four {
        pkt.extract(e, ((bit<32>)hdr.ipv4.ttl[1:0] + (bit<32>)hdr.ipv4.ttl[3:2]) * 8);
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
