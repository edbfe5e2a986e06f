heder h_t { bit<8> f; }
contrl C(inout bit<8> x) {
    apply { }
}
parser P(packet_in pkt) {
    state start {
        tranistion accept;
    }
}
