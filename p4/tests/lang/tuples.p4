/* Tuples (P4_16 §7.2.8): `tuple<...>` locals and constants, `t[i]` with a constant index,
   `==` (element by element), and a tuple passed whole where a list expression goes (Hash.get
   hashes the same bits as the list of the same fields; the deparser's Checksum.update sums
   the tuple's elements as 16-bit words). */
#include <core.p4>
#include <tna.p4>

header h_t {
    bit<8> a;
    bit<8> b;
    bit<16> c;
    bit<8> d;
    bit<16> e;
    bit<8> flags;
    bit<16> ck;
}
struct headers_t { h_t h; }
struct meta_t {}

const tuple<bit<8>, bit<8>> K = { 0x11, 0x22 };

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
    Hash<bit<16>>(HashAlgorithm_t.CRC16) h1;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) h2;
    apply {
        tuple<bit<8>, bit<16>> t = { hdr.h.a, hdr.h.c };
        tuple<bit<8>, bit<16>> u = { hdr.h.b, hdr.h.c };
        bit<8> flags = 0;
        hdr.h.d = t[0] + K[1];
        hdr.h.e = t[1] ^ (bit<16>)K[0];
        if (t == u) {
            flags = flags | 1;
        }
        bit<16> ht = h1.get(t);
        bit<16> hl = h2.get({ hdr.h.a, hdr.h.c });
        if (ht == hl) {
            flags = flags | 2;
        }
        u = t;
        if (u[0] == hdr.h.a && u != { hdr.h.b, hdr.h.c }) {
            flags = flags | 4;
        }
        hdr.h.flags = flags;
        ig_tm_md.ucast_egress_port = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    Checksum() ck;
    apply {
        tuple<bit<8>, bit<8>> ab = { hdr.h.a, hdr.h.b };
        hdr.h.ck = ck.update(ab);
        pkt.emit(hdr);
    }
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
