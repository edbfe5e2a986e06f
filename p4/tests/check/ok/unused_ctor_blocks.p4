/* Controls that no pipeline instantiates are still type-checked; their constructor parameters
 * take their defaults (`Acl`), and a block with a parameter that has no default (`Sized`) is
 * specialised only where instantiated, so an unused one is skipped, as the SDE switch
 * program's shared files declare many blocks a given profile never uses. */
#include "../head.p4inc"

control Acl(inout metadata_t meta)(bit<32> table_size = 512) {
    action set(bit<8> v) { meta.b8 = v; }
    table acl {
        key = { meta.a16 : ternary; }
        actions = { set; NoAction; }
        size = table_size;
    }
    apply { acl.apply(); }
}

control Sized(inout metadata_t meta)(bit<32> table_size) {
    table t {
        key = { meta.a16 : exact; }
        actions = { NoAction; }
        size = table_size;
    }
    apply { t.apply(); }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = 1; }
}

#include "../tail.p4inc"
