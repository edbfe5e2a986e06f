header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr
    bit<16> ether_type;
}
