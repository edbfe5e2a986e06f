/* `@pa_alias` pairs pisa leaves apart, each with a warning: two header fields (a header's
   storage is its packet bytes, so neither moves), a narrower field whose storage is already a
   header field's (it would become the wider's low bits), and a name that is no field. A header field with a metadata field is applied (the metadata name moves
   onto the header field): `meta.b8 = hdr.ipv4.ttl` becomes `ttl = ttl` and is dropped. */
#include "../head.p4inc"

@pa_alias("ingress", "meta.b8", "hdr.ipv4.ttl")
@pa_alias("ingress", "hdr.ipv4.ttl", "hdr.ipv4.protocol")
@pa_alias("ingress", "meta.a16", "meta.b8")
@pa_alias("ingress", "meta.nothing", "meta.b8")
@pa_alias("egress", "meta.nothing", "meta.b8")
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        meta.b8 = hdr.ipv4.ttl;
        hdr.ipv4.ttl = meta.b8;
    }
}

#include "../tail.p4inc"
