// Expression forms and P4 operator precedence.
#include <core.p4>

typedef bit<16> port_t;
struct pair_t { bit<8> a; bit<8> b; }
header h_t { bit<8> f; bit<16> g; }
extern bit<32> hash_of<T>(in T data);

control Exprs(inout h_t h, inout pair_t p) {
    bit<32> x = 0;
    int<8> s = -8s3;
    bool b = true;
    pair_t q = { a = 1, b = 8w2 };
    apply {
        x = 1 + 2 * 3 - 4 / 2 % 3;
        x = x << 2 + 1;
        x = (x >> 1) & 0xff | 0x100 ^ 0b1;
        b = x & 1 == 1 && !b || x != 2;
        b = x < 4 || x <= 5 || x > 6 || x >= 7;
        x = x |+| 5 |-| 3;
        x = (bit<32>) h.f ++ (bit<24>) 0;
        h.g = h.f ++ p.a;
        h.f = h.g[15:8];
        h.f[0:0] = 1w1;
        x = b ? 32w1 : b ? 32w2 : 32w3;
        x = ~x;
        x = -x;
        x = hash_of<pair_t>(p);
        x = hash_of(data = { p.a, p.b });
        x = (bit<32>) (port_t) 5;
        x = 16w0xFFFF ++ 16s7;
        x = 1_000_000 + 0o17 + 0d9;
        if (error.NoError == error.NoMatch) { exit; }
        x = p.a == 1 ? (bit<32>) p.b : 0;
    }
}
