/* Two tables each given `@placement_priority` over the other: bf-p4c refuses it ("Tables A and B
   have both been prioritized over each other, which is nonsensical":
   mau/table_layout.cpp `CheckPlacementPriorities`), and so does pisa. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    @placement_priority("Ingress.b")
    table a {
        key = { hdr.ipv4.ttl : exact; }
        actions = { NoAction; }
        size = 16;
    }
    @placement_priority("Ingress.a")
    table b {
        key = { hdr.ipv4.protocol : exact; }
        actions = { NoAction; }
        size = 16;
    }
    apply {
        a.apply();
        b.apply();
    }
}

#include "../tail.p4inc"
