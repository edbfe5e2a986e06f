// Every kind of declaration the TNA subset uses.
#include <core.p4>

error { MyParseError }
match_kind { my_match }

typedef bit<48> mac_t;
type bit<32> ip_t;
const bit<8> VERSION = 8w4;
const int BIG = 1 << 40;

enum Color { Red, Green, Blue }
enum bit<8> Proto_t { TCP = 6, UDP = 17, }

header vlan_h { bit<3> pcp; bit<1> dei; bit<12> vid; bit<16> ether_type; }
header opt_h { varbit<320> data; }
header_union ip_u { vlan_h v; opt_h o; }
struct headers_t {
    vlan_h[4] vlans;
    @name("ip") ip_u ip;
    tuple<bit<8>, bool> t;
}
struct generic_s<T> { T value; }

extern Thing<T, U> {
    Thing(bit<32> size, @optional T init);
    U get<D>(in D data);
    void set(in T value);
    abstract void callback(inout T value, @optional out U result);
}

extern T pick<T>(in bool c, in T a, in T b);
extern void notify(in bit<8> code);

bit<8> add_one(in bit<8> v) {
    return v + 1;
}

parser P<H>(packet_in pkt, out H hdr);
control C<H>(inout H hdr);
package Top<H>(P<H> p, C<H> c);

control MyC(inout headers_t hdr)(bit<32> size) {
    action a(in bit<8> x, bit<8> data) { hdr.vlans[0].pcp = (bit<3>) x; }
    apply {
        hdr.vlans.push_front(2);
        hdr.vlans.pop_front(1);
        hdr.vlans.next.vid = 1;
        hdr.vlans.last.vid = hdr.vlans[1].vid;
        if (hdr.ip.v.isValid()) { hdr.ip.o.setInvalid(); }
        Color c = Color.Red;
        const bit<8> K = 3;
        bit<8> fresh;
        fresh = add_one(K);
        notify(fresh);
        ;
        {
            @atomic { fresh = 0; }
        }
        return;
    }
}
