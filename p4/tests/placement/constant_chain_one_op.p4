/* A chain of additions and subtractions of constants is one ALU operation: p4c's strength
   reduction rewrites `x - c` as `x + (-c)` and its reassociation `(x + c1) + c2` as
   `x + (c1 + c2)` (frontends/p4/strengthReduction, reassociation), so
   `a16 - 20 - 14 - 8` (header sizes, as the SDE switch program's decap length adjustment
   writes it) and `1 + ttl + 2` are one add each and get no warning. Two variables in one
   chain still need two operations. */
// expect no_warning (meta.a16 - 20) - 14) - 8`
// expect no_warning `(1 + hdr.ipv4.ttl) + 2`
// expect warning `(meta.a16 - hdr.ipv4.total_len) - 4` needs 2 operations
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action strip_outer() {
        meta.a16 = meta.a16 - hdr.ipv4.minSizeInBytes() - hdr.ethernet.minSizeInBytes() - 8;
        hdr.ipv4.ttl = 1 + hdr.ipv4.ttl + 2;
    }
    action two_ops() {
        meta.a16 = meta.a16 - hdr.ipv4.total_len - 4;
    }
    table t {
        key = { hdr.ipv4.protocol : exact; }
        actions = { strip_outer; two_ops; }
        size = 16;
    }
    apply {
        t.apply();
    }
}

#include "../check/tail.p4inc"
