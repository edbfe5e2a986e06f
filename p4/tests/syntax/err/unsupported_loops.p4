control C(inout bit<8> x) {
    apply {
        for (bit<8> i = 0; i < 4; i = i + 1) {
            x = x + 1;
        }
        break;
        x = 2;
    }
}
