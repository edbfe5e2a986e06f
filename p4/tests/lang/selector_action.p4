/* SelectorAction: the data plane turns members of an ActionSelector's groups off and on (fast
   failover). The selector keeps a status bit per group member in `status`; a member whose bit
   is 0 is skipped, the hash (IDENTITY of the flow id, not scrambled) picking among the active
   ones (flow modulo their count). `down`/`up` write bit `idx`: group slot s, member i is bit s * 4 + i
   (4 = max group size). op 1 looks the flow up, op 2 takes bit idx down, op 3 puts it back up;
   both return the bit's old value in `b`. Members and groups: selector_action.tables.yaml. */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8>  a;
    bit<8>  b;
    bit<16> flow;
    bit<32> idx;
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
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) flow_hash;
    ActionProfile(16) ap;
    Register<bit<1>, bit<32>>(8) status;
    ActionSelector(ap, flow_hash, SelectorMode_t.FAIR, status, 4, 2) sel;
    SelectorAction(sel) down = {
        void apply(inout bit<1> value, out bit<1> rv) {
            rv = value;
            value = 0;
        }
    };
    SelectorAction(sel) up = {
        void apply(inout bit<1> value, out bit<1> rv) {
            rv = value;
            value = 1;
        }
    };
    action set_b(bit<8> v) {
        hdr.h.b = v;
    }
    @selector_enable_scramble(0)
    table t {
        key = {
            hdr.h.flow : selector;
            hdr.h.a    : exact;
        }
        actions = { set_b; NoAction; }
        implementation = sel;
        size = 16;
    }
    apply {
        if (hdr.h.a == 2) {
            hdr.h.b = (bit<8>) down.execute(hdr.h.idx);
        } else if (hdr.h.a == 3) {
            hdr.h.b = (bit<8>) up.execute(hdr.h.idx);
        } else {
            t.apply();
        }
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
