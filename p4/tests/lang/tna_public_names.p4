/* Names Intel's public TNA headers give that programs use: the device width macros
   (`PORT_ID_WIDTH`, ...), `DEVPORT_PIPE`/`DEVPORT_PORT`, `COMPILER_VERSION`/`PACK_VERSION`,
   the headers' include guards, the `type` parameter of the statistics externs as a named
   argument, Tofino 1's two-field output-port metadata, a digest list with a literal typed by
   the digest's struct, and names (`CloneId_t`, `IdleTimeout`) Tofino 1's headers leave free. */
#include <core.p4>
#include <tna.p4>

#if !defined(_TOFINO1_NATIVE_ARCHITECTURE_) || !defined(_CORE_P4_) || !defined(_TOFINO1_P4_BASE_) || !defined(_TOFINO1_P4_ARCH_) || !defined(_TOFINO1_P4_SPECS_)
#error "the public headers' include guards are not defined"
#endif
#if COMPILER_VERSION < PACK_VERSION(9, 7, 0) || COMPILER_VERSION >= PACK_VERSION(10, 0, 0)
#error "COMPILER_VERSION is not 9.13.x"
#endif

typedef bit<3> CloneId_t;
extern IdleTimeout { IdleTimeout(); }

header h_t {
    bit<8> pipe;
    bit<8> port;
    bit<(16 - PORT_ID_WIDTH)> pad;
    PortId_t in_port;
    bit<8> q;
}
struct headers_t { h_t h; }
struct meta_t {}
struct digest_t { bit<8> port; bit<16> tag; }

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
    Counter<bit<32>, bit<8>>(size = 256, type = CounterType_t.PACKETS) seen;
    apply {
        hdr.h.pipe = (bit<8>) DEVPORT_PIPE(ig_intr_md.ingress_port);
        hdr.h.port = (bit<8>) DEVPORT_PORT(ig_intr_md.ingress_port);
        hdr.h.in_port = ig_intr_md.ingress_port & DEVPORT_PORT_MASK;
        hdr.h.q = QUEUE_ID_WIDTH;
        seen.count(hdr.h.port);
        ig_dprsr_md.digest_type = 1;
        ig_tm_md.ucast_egress_port = 1;
    }
}

control ID(packet_out pkt, inout headers_t hdr, in meta_t m,
           in ingress_intrinsic_metadata_for_deparser_t d) {
    Digest<digest_t>(1) learn;
    apply {
        if (d.digest_type == 1) { learn.pack({hdr.h.port, 0}); }
        pkt.emit(hdr);
    }
}

parser EP(packet_in pkt, out headers_t hdr, out meta_t m, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t m, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d,
           inout egress_intrinsic_metadata_for_output_port_t o) {
    apply { o = { capture_tstamp_on_tx = 0, update_delay_on_tx = 0 }; }
}
control ED(packet_out pkt, inout headers_t hdr, in meta_t m,
           in egress_intrinsic_metadata_for_deparser_t d) { apply {} }

Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
