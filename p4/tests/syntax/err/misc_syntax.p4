// Assorted mistakes, one per declaration.
enum Color { Red Green }
extern E { E(); void f(in bit<8> x) }
const bit<8> A = f<bit<8>(1);
control C(inout bit<8> x) {
    action a() { ) }
    apply {
        switch (x) { 1 { } }
        x = x ? 1;
        @ name("x") x = 1;
    }
}
parser P(packet_in p) {
    state start { transition select(p.lookahead<bit<8>>()) { 1 &&& : accept; } }
}
