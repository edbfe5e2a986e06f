/* What bf-p4c's ErrorOnUnsupportedVarbitUse (midend/desugar_varbit_extract.cpp) refuses and
   pisa runs, each with a warning: setValid on a header holding a varbit field, an assignment of
   a varbit field, an assignment of a header holding one. Assigning the header's fixed fields
   is quiet. */
#define CUSTOM_PARSER
#include "../head.p4inc"

header opt_h { bit<8> kind; varbit<64> data; }

parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    opt_h a;
    opt_h b;
    apply {
        a.setValid();
        b.data = a.data;
        b = a;
        b.kind = a.kind;
        ig_tm_md.ucast_egress_port = 1;
    }
}

#include "../tail.p4inc"
