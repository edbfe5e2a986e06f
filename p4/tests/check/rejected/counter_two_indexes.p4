/* An indirect counter takes its address from one source: indexing it by one field in one
   action and by another field in another is refused, as by bf-p4c. */
#include "../head.p4inc"

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<32>, bit<8>>(256, CounterType_t.PACKETS) c;
    action by_ttl() { c.count(hdr.ipv4.ttl); }
    action by_proto() { c.count(hdr.ipv4.protocol); }
    table t {
        key = { hdr.ethernet.ether_type : exact; }
        actions = { by_ttl; by_proto; }
    }
    apply { t.apply(); }
}

#include "../tail.p4inc"
