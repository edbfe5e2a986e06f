/* Deparser checksum: IPv4 header checksum recomputed after a TTL change; a pair of 16-bit
   fields whose ones' complement sum is 0xFFFF gives checksum 0 (plain) or 0xFFFF with
   zeros_as_ones; TCP checksum incrementally updated through a parser residual (subtract + get)
   after the ports are rewritten. */
#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
header ipv4_h { bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags;
  bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst; }
header tcp_h { bit<16> sport; bit<16> dport; bit<32> seq; bit<32> ack; bit<4> off; bit<4> res;
  bit<8> flags; bit<16> win; bit<16> csum; bit<16> urg; }
header z_h { bit<16> a; bit<16> b; bit<16> c_plain; bit<16> c_zao; }
struct hdr_t { ethernet_h eth; ipv4_h ip; tcp_h tcp; z_h z; }
struct md_t { bit<16> resid; }
parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    Checksum() tcsum;
    state start {
        pkt.extract(ig);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.ip);
        pkt.extract(hdr.tcp);
        tcsum.subtract({hdr.tcp.sport, hdr.tcp.dport});
        tcsum.subtract({hdr.tcp.csum});
        md.resid = tcsum.get();
        pkt.extract(hdr.z);
        transition accept;
    }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    apply {
        tm.ucast_egress_port = 1;
        hdr.ip.ttl = hdr.ip.ttl - 1;
        hdr.tcp.sport = 16w0x1111;
        hdr.tcp.dport = 16w0x2222;
    }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md,
           in ingress_intrinsic_metadata_for_deparser_t dm) {
    Checksum() ipc;
    Checksum() tc;
    Checksum() zp;
    Checksum() zz;
    apply {
        hdr.ip.csum = ipc.update({hdr.ip.version, hdr.ip.ihl, hdr.ip.tos, hdr.ip.len, hdr.ip.id,
            hdr.ip.flags, hdr.ip.frag, hdr.ip.ttl, hdr.ip.proto, hdr.ip.src, hdr.ip.dst});
        hdr.tcp.csum = tc.update({hdr.tcp.sport, hdr.tcp.dport, md.resid});
        hdr.z.c_plain = zp.update({hdr.z.a, hdr.z.b});
        hdr.z.c_zao = zz.update({hdr.z.a, hdr.z.b}, true);
        pkt.emit(hdr);
    }
}
parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control E(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
          in egress_intrinsic_metadata_from_parser_t ep,
          inout egress_intrinsic_metadata_for_deparser_t ed,
          inout egress_intrinsic_metadata_for_output_port_t eo) { apply { } }
control ED(packet_out pkt, inout hdr_t hdr, in md_t md,
           in egress_intrinsic_metadata_for_deparser_t ed) { apply { pkt.emit(hdr); } }
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
