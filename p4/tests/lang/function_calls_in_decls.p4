/* Function calls where no statement can go (P4_16 §10 "Functions"; p4c inlines them in its
   frontend): a table key `low4(hdr.h.k)`, a constant's initializer `twice(0x21)`, and a
   RegisterAction body that calls `bump`. The register cell at index 0 starts at 0 and
   adds `hdr.h.v` per packet while it is below 0xF0; the table hits on the low 4 bits of k. */
#include <core.p4>
#include <tna.p4>

bit<8> low4(in bit<8> x) {
    return x & 0x0F;
}
bit<8> twice(in bit<8> x) {
    return x + x;
}
bit<8> bump(in bit<8> a, in bit<8> b) {
    return a + b;
}
const bit<8> MARK = twice(0x21);

header h_t {
    bit<8> k;
    bit<8> v;
    bit<8> res;
    bit<8> reg;
}
struct headers_t { h_t h; }
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<8>, bit<1>>(1, 0) acc;
    RegisterAction<bit<8>, bit<1>, bit<8>>(acc) add = {
        void apply(inout bit<8> value, out bit<8> rv) {
            if (value < 0xF0) {
                value = bump(value, hdr.h.v);
            }
            rv = value;
        }
    };
    action mark() { hdr.h.res = MARK; }
    table t {
        key = { low4(hdr.h.k) : exact; }
        actions = { mark; NoAction; }
        const entries = { 5 : mark(); }
        default_action = NoAction();
    }
    apply {
        t.apply();
        hdr.h.reg = add.execute(0);
        ig_tm_md.ucast_egress_port = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    apply { pkt.emit(hdr); }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) { apply {} }
control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t d) { apply {} }

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
