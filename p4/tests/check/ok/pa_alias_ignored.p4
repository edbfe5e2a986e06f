/* `@pa_alias` makes bf-p4c put two fields in one container, so a copy from one to the other
   disappears (the SDE switch program aliases `local_md.multicast.id` with
   `ig_intr_md_for_tm.mcast_grp_b` and copies one into the other last in ingress). pisa keeps
   the fields apart: accepted with a warning that says the copy stays and can cost a stage. */
#include "../head.p4inc"

@pa_alias("ingress", "meta.a16", "ig_tm_md.mcast_grp_b")
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        ig_tm_md.mcast_grp_b = meta.a16;
    }
}

#include "../tail.p4inc"
