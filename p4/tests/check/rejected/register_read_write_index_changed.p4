/* `Register.read()` and `.write()` of one register in one action are merged into one
 * RegisterAction (bf-p4c's RegisterReadWrite pass) only when nothing between them changes what
 * the write reads: here the index changes between the read and the write, so they stay two
 * accesses of the register in one pass, which a stateful ALU cannot do. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<16>, bit<8>>(256, 0) r;
    action rw() {
        bit<16> old = r.read(hdr.ipv4.ttl);
        hdr.ipv4.ttl = 3;
        r.write(hdr.ipv4.ttl, old + 5);
        meta.a16 = old;
    }
    apply {
        rw();
    }
}

#include "../tail.p4inc"
