/* `@stage(n)` past the target's last stage: bf-p4c's stage pragma allows "stage numbers 0 to 11"
   on Tofino (and would place the table there, then fail for needing more stages than the
   device has). Refused on Tofino 1 with the table, the stage and the stage count; the same
   program places `late` in stage 12 on Tofino 2, which has 20 stages
   (tests/placement.rs `stage_pins_follow_the_target_stage_count`). */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    @stage(12)
    table late {
        key = { hdr.ipv4.ttl : exact; }
        actions = { NoAction; }
        size = 16;
    }
    apply {
        late.apply();
    }
}

#include "../tail.p4inc"
