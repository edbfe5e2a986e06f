/* A DirectRegister: one cell per entry of table `t`. Its action adds byte x to the entry's
   cell and writes the old value into byte old. The STF reads each entry's cell by the name
   its `add` gave it (`check_register Ing.sums($A)`), as it reads a direct counter. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> x;
    bit<8> old;
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
    DirectRegister<bit<8>>() sums;
    DirectRegisterAction<bit<8>, bit<8>>(sums) add_x = {
        void apply(inout bit<8> value, out bit<8> rv) {
            rv = value;
            value = value + hdr.h.x;
        }
    };
    action bump() { hdr.h.old = add_x.execute(); }
    table t {
        key = { hdr.h.a : exact; }
        actions = { bump; NoAction; }
        registers = sums;
        size = 4;
        default_action = NoAction();
    }
    apply {
        t.apply();
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
