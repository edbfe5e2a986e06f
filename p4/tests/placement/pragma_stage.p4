/* `@pragma NAME args` is the annotation `NAME(args)`: p4c's lexer reads `@pragma` and then the
   pragma's name and its arguments to the end of the line (as P4_14 programs translated to
   P4_16, and production programs, write them), so `@pragma stage 4` pins a table as
   `@stage(4)` does and `@pragma placement_priority 1` orders as `@placement_priority(1)`.
   `first` could go in stage 0 but is pinned to 4; `second`, free, stays in stage 0. A pragma
   name pisa ignores is reported under its own name, not as `@pragma`. */
// expect stage Ingress.first 4
// expect stage Ingress.second 0
// expect placed Ingress.first: pinned by `@stage(4)`
// expect warning annotation `@pa_solitary` accepted, ignored: PHV allocation is not modelled
// expect no_warning `@pragma`
#include "../check/head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_b(bit<8> v) { meta.b8 = v; }
    @pragma stage 4
    table first {
        key = { hdr.ipv4.src_addr : exact; }
        actions = { set_b; NoAction; }
        size = 256;
    }
    @pragma pa_solitary ingress hdr.ipv4.ttl
    table second {
        key = { hdr.ipv4.ttl : exact; }
        actions = { NoAction; }
        size = 16;
    }
    apply {
        first.apply();
        second.apply();
    }
}

#include "../check/tail.p4inc"
