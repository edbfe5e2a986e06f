/* Two tables given one name by `@name`: p4c refuses the program (its P4Info would name two
   tables alike); pisa did accept it, and then neither could be programmed by name. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    @name("x")
    table by_ttl {
        key = { hdr.ipv4.ttl : exact; }
        actions = { NoAction; }
        size = 16;
    }
    @name("x")
    table by_protocol {
        key = { hdr.ipv4.protocol : exact; }
        actions = { NoAction; }
        size = 16;
    }
    apply {
        by_ttl.apply();
        by_protocol.apply();
    }
}

#include "../tail.p4inc"
