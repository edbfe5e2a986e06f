control Ingress(inout bit<8> x) {
    action a() { x = 1; }
}
