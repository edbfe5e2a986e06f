/* Control-local copies of fields cost no stage. p4c's midend (LocalCopyPropagation, then the
   removal of unused declarations) reads the field itself wherever a local that only copies it
   is used, before bf-p4c places anything, so the copy is no statement of its own:
   - HashIt copies the IPv4 addresses and protocol into locals and hashes the locals (the
     shape of the SDE switch program's hash controls): the hash reads the header in stage 0,
     by_hash matches on its result in stage 1 (2 with the copies as statements);
   - `et` copies the EtherType and gates by_ttl: the gateway reads the header, stage 0;
   - `k` copies the source MAC and is keyed_on_local's key: stage 0.
   (Before: by_hash 2, by_ttl 1, keyed_on_local 1.) A copy whose source is written before the
   use is kept: `m` copies meta.b8, which keyed_on_local's set_b rewrites before `m == 3` is
   tested, so that gateway reads `m` in its own storage, written by a statement of stage 0,
   and kept (under the gateway) sits in stage 1. */
// expect stage Ingress.by_hash 1
// expect stage Ingress.by_ttl 0
// expect stage Ingress.keyed_on_local 0
// expect stage Ingress.kept 1
// expect placed if (Ingress.m == 3): after Ingress.m = meta.b8
// expect placed Ingress.by_ttl: with if (hdr.ethernet.ether_type == 0x800)
#include "../check/head.p4inc"

control HashIt(in headers_t hdr, out bit<16> h) {
    Hash<bit<16>>(HashAlgorithm_t.CRC16) hash;
    bit<32> src = hdr.ipv4.src_addr;
    bit<32> dst = hdr.ipv4.dst_addr;
    bit<8> proto = hdr.ipv4.protocol;
    apply {
        h = hash.get({src, dst, proto});
    }
}

control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    HashIt() hash_it;
    bit<48> k;
    action set_port(PortId_t p) { ig_tm_md.ucast_egress_port = p; }
    action set_b(bit<8> v) { meta.b8 = v; }
    action set_ttl(bit<8> v) { hdr.ipv4.ttl = v; }
    action set_dscp(bit<8> v) { hdr.ipv4.diffserv = v; }
    table by_hash {
        key = { meta.a16 : exact; }
        actions = { set_port; }
        size = 1024;
    }
    table by_ttl {
        key = { hdr.ipv4.ttl : exact; }
        actions = { set_ttl; }
        size = 256;
    }
    table keyed_on_local {
        key = { k : exact; }
        actions = { set_b; }
        size = 1024;
    }
    table kept {
        key = { hdr.ipv4.diffserv : exact; }
        actions = { set_dscp; }
        size = 256;
    }
    apply {
        bit<16> et = hdr.ethernet.ether_type;
        bit<8> m = meta.b8;
        k = hdr.ethernet.src_addr;
        hash_it.apply(hdr, meta.a16);
        by_hash.apply();
        if (et == 0x0800) {
            by_ttl.apply();
        }
        keyed_on_local.apply();
        if (m == 3) {
            kept.apply();
        }
    }
}

#include "../check/tail.p4inc"
