/* A RegisterAction that tests `value` after writing it: bf-p4c compiles the condition to a
 * compare unit on the memory word (the value before the update), so pisa runs it that way and
 * warns. The same test written the way the hardware reads it (`last`) draws no warning, nor
 * does `early`, whose two assignments of `rv` are exclusive through its `return`. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<16>, bit<8>>(256, 0) seq;
    RegisterAction<bit<16>, bit<8>, bit<16>>(seq) next_seq = {
        void apply(inout bit<16> value, out bit<16> rv) {
            value = value + 1;
            if (value == 1000) {
                rv = 1;
            } else {
                rv = 0;
            }
        }
    };
    RegisterAction<bit<16>, bit<8>, bit<16>>(seq) last = {
        void apply(inout bit<16> value, out bit<16> rv) {
            if (value == 999) {
                rv = 1;
            } else {
                rv = 0;
            }
            value = value + 1;
        }
    };
    RegisterAction<bit<16>, bit<8>, bit<16>>(seq) early = {
        void apply(inout bit<16> value, out bit<16> rv) {
            if (value == 999) {
                rv = 1;
                return;
            }
            rv = value;
        }
    };
    apply {
        if (hdr.ipv4.isValid()) {
            meta.a16 = next_seq.execute(hdr.ipv4.ttl);
        } else if (hdr.ethernet.isValid()) {
            meta.a16 = early.execute(1);
        } else {
            meta.a16 = last.execute(0);
        }
    }
}

#include "../tail.p4inc"
