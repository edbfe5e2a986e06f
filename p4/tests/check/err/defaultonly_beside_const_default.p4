/* A `@defaultonly` action beside a different `const default_action` can never run: bf-p4c
   refuses it (common/extract_maupipe.cpp SetupActionProperties). Table `ok` (its `@defaultonly`
   action is the const default) and table `ok2` (a `@defaultonly` action beside a non-const
   default) are accepted. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set(bit<8> v) { meta.b8 = v; }
    action miss1() { meta.b8 = 1; }
    action miss2() { meta.b8 = 2; }
    table t {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { set; @defaultonly miss1; @defaultonly miss2; }
        const default_action = miss2();
    }
    table ok {
        key = { hdr.ethernet.src_addr : exact; }
        actions = { set; @defaultonly miss2; }
        const default_action = miss2();
    }
    table ok2 {
        key = { hdr.ethernet.ether_type : exact; }
        actions = { set; @defaultonly miss1; @defaultonly miss2; }
        default_action = miss2();
    }
    apply { t.apply(); ok.apply(); ok2.apply(); }
}

#include "../tail.p4inc"
