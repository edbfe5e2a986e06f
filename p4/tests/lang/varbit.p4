/* `varbit<N>` header fields (P4_16 §7.1.6) and the two-argument extract (§12.8.2).
   IPv4 (ethertype 0x0800): options in a `varbit<320>` extracted with the length the IHL gives,
   forwarded as they came; TTL decremented and the checksum recomputed over the header and its
   options. A TLV (ethertype 0x88b5): `kind`, `len` (bytes of data) and `size`, then a body of
   `varbit<64>` data and a fixed `tail` byte after it. By kind: 1 copies body.data into
   copy.data (a field assigned from another varbit), 2 invalidates the body, 3 copies the whole
   body header into body2; every TLV gets size = sizeInBytes(body). A length over the field's 64
   bits ends the parse as `transition reject` (no error, no drop: bf-p4c's reject branch); a
   packet shorter than the length is PacketTooShort, dropped. */
#include <core.p4>
#include <tna.p4>

header ethernet_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_h {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len;
    bit<16> identification; bit<3> flags; bit<13> frag_offset;
    bit<8> ttl; bit<8> protocol; bit<16> hdr_checksum;
    bit<32> src_addr; bit<32> dst_addr;
}
header ipv4_options_h { varbit<320> options; }
header tlv_h { bit<8> kind; bit<8> len; bit<8> size; }
header body_h { varbit<64> data; bit<8> tail; }
header copy_h { varbit<64> data; }

struct headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    ipv4_options_h ipv4_options;
    tlv_h tlv;
    body_h body;
    body_h body2;
    copy_h copy;
}
struct meta_t {}

parser IP(packet_in pkt, out headers_t hdr, out meta_t m,
          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ipv4;
            0x88b5: parse_tlv;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        pkt.extract(hdr.ipv4_options, (bit<32>)(((bit<16>)hdr.ipv4.ihl - 5) * 32));
        transition accept;
    }
    state parse_tlv {
        pkt.extract(hdr.tlv);
        pkt.extract(hdr.body, (bit<32>)hdr.tlv.len * 8);
        transition accept;
    }
}

control Ing(inout headers_t hdr, inout meta_t m, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        ig_tm_md.ucast_egress_port = 1;
        if (hdr.ipv4.isValid()) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        }
        if (hdr.tlv.isValid()) {
            hdr.tlv.size = (bit<8>)sizeInBytes(hdr.body);
            if (hdr.tlv.kind == 1) {
                hdr.copy.setValid();
                hdr.copy.data = hdr.body.data;
            } else if (hdr.tlv.kind == 2) {
                hdr.body.setInvalid();
            } else if (hdr.tlv.kind == 3) {
                hdr.body2 = hdr.body;
            }
        }
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    Checksum() ipv4_checksum;
    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
            hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
            hdr.ipv4_options.options
        });
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
