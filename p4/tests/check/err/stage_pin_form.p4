/* `@stage` forms bf-p4c refuses (ir/mau.cpp `get_provided_stage`: "Stage pragma provided can
   have only one or two constant parameters >= 0"; a flag other than "immediate" /
   "noimmediate" is invalid): a negative stage, three numbers, an unknown flag. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    @stage(-1)
    table a {
        key = { hdr.ipv4.ttl : exact; }
        actions = { NoAction; }
        size = 16;
    }
    @stage(1, 16, 2)
    table b {
        key = { hdr.ipv4.protocol : exact; }
        actions = { NoAction; }
        size = 16;
    }
    @stage(2, "fast")
    table c {
        key = { hdr.ipv4.diffserv : exact; }
        actions = { NoAction; }
        size = 16;
    }
    apply {
        a.apply();
        b.apply();
        c.apply();
    }
}

#include "../tail.p4inc"
