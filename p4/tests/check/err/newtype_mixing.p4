/* `type` declares a new type (P4_16 "Introducing new types"): it does not mix with its
 * underlying type or an integer without a cast, as p4c's type checker refuses; a `typedef` is
 * only another name, and casts convert either way (issue 11, lang 3). */
#include "../head.p4inc"

type bit<9> Port_t;
typedef bit<9> PortAlias_t;
type bit<16> Tag_t;
struct nt_t { Port_t p; Tag_t t; bit<9> raw; }

Port_t next_port(in Port_t p) { return (Port_t) ((bit<9>) p + 1); }

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    nt_t m;
    action set_tag(Tag_t t) { m.t = t; }
    apply {
        m.raw = ig_intr_md.ingress_port;
        m.p = (Port_t) ig_intr_md.ingress_port;     // a cast: accepted
        PortAlias_t a = ig_intr_md.ingress_port;     // a typedef: accepted
        m.t = (Tag_t) 16w3;
        m.p = m.raw;                                 // bit<9> into Port_t
        ig_tm_md.ucast_egress_port = m.p;            // Port_t into PortId_t (bit<9>)
        m.p = m.p + 1;                               // `+` on Port_t
        if (m.p == 5) { m.raw = 1; }                 // Port_t compared to an int
        if (m.t < m.t) { m.raw = 2; }                // `<` on Tag_t
        if (m.p == (Port_t) a) { m.raw = 3; }        // same new type: accepted
        ig_tm_md.ucast_egress_port = (PortId_t) m.p; // a cast: accepted
        m.p = next_port(m.p);                        // Port_t in and out: accepted
        m.p = next_port(m.raw);                      // bit<9> for a Port_t parameter
        set_tag(m.t);                                // accepted
        set_tag(16w7);                               // bit<16> for a Tag_t parameter
    }
}

#include "../tail.p4inc"
