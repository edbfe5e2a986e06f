/* pisa: the Tofino architecture's enums, intrinsic metadata and externs, shared by tna.p4
 * (PISA_TOFINO_GEN == 1: Tofino 1's externs and layouts, with the target's device specs) and
 * t2na.p4 (PISA_TOFINO_GEN == 2). Names, signatures and field
 * widths follow Intel's public TNA / T2NA so that real programs compile unchanged; the text
 * and layout are pisa's own. The including header has already included the device specs. */
#ifndef PISA_TOFINO_BASE_P4
#define PISA_TOFINO_BASE_P4
/* The include guard Intel's header of this generation defines (programs may test it). */
#if PISA_TOFINO_GEN == 1
#define _TOFINO1_P4_BASE_
#else
#define _TOFINO2_P4_BASE_
#endif

/* The compiler's version as one number, to compare with `#if COMPILER_VERSION >= ...`. */
#define PACK_VERSION(a, b, c) (((a) << 24) + ((b) << 12) + (c))
#define COMPILER_VERSION PACK_VERSION(__p4c_major__, __p4c_minor__, __p4c_patchlevel__)

/* ---- parser error flags (bits of *_intrinsic_metadata_from_parser_t.parser_err) ---- */
const bit<16> PARSER_ERROR_OK           = 16w0x0000;
const bit<16> PARSER_ERROR_NO_MATCH     = 16w0x0001;
const bit<16> PARSER_ERROR_PARTIAL_HDR  = 16w0x0002;
const bit<16> PARSER_ERROR_CTR_RANGE    = 16w0x0004;
const bit<16> PARSER_ERROR_TIMEOUT_USER = 16w0x0008;
const bit<16> PARSER_ERROR_TIMEOUT_HW   = 16w0x0010;
const bit<16> PARSER_ERROR_SRC_EXT      = 16w0x0020;
#if PISA_TOFINO_GEN == 1
const bit<16> PARSER_ERROR_DST_CONT     = 16w0x0040;
#endif
const bit<16> PARSER_ERROR_PHV_OWNER    = 16w0x0080;
const bit<16> PARSER_ERROR_MULTIWRITE   = 16w0x0100;
const bit<16> PARSER_ERROR_ARAM_MBE     = 16w0x0400;
const bit<16> PARSER_ERROR_FCS          = 16w0x0800;
#if PISA_TOFINO_GEN == 2
const bit<16> PARSER_ERROR_CSUM_MBE     = 16w0x1000;
#endif

/* ---- enums ---- */
enum MeterType_t { PACKETS, BYTES }

enum bit<8> MeterColor_t { GREEN = 8w0, YELLOW = 8w1, RED = 8w3 }

enum CounterType_t { PACKETS, BYTES, PACKETS_AND_BYTES }

enum SelectorMode_t { FAIR, RESILIENT }

enum HashAlgorithm_t {
    IDENTITY,
    RANDOM,
    CRC8,
    CRC16,
    CRC32,
    CRC64,
    CUSTOM,
    XOR8,
    XOR16,
    XOR32
}

enum MathOp_t { MUL, SQR, SQRT, DIV, RSQR, RSQRT }

/* Extra match kinds of the Tofino MAU. */
match_kind {
    range,
    selector,
    atcam_partition_index,
    dleft_hash
}

/* Extra parser errors of the Tofino parser. */
error {
    CounterRange,
    Timeout,
    PhvOwner,
    MultiWrite,
    IbufOverflow,
    IbufUnderflow
}

/* ---- ingress intrinsic metadata ---- */

/* Prepended to every packet by the ingress MAC; the first thing the ingress parser extracts. */
@__intrinsic_metadata
header ingress_intrinsic_metadata_t {
    bit<1>   resubmit_flag;       /* 1 for a resubmitted packet */
    @padding bit<1> _pad1;
    bit<2>   packet_version;
    @padding bit<3> _pad2;
    PortId_t ingress_port;
    bit<48>  ingress_mac_tstamp;  /* ns, taken at the ingress MAC */
}

/* What ingress tells the traffic manager. */
@__intrinsic_metadata
struct ingress_intrinsic_metadata_for_tm_t {
    PortId_t           ucast_egress_port;
    bit<1>             bypass_egress;
    bit<1>             deflect_on_drop;
    bit<3>             ingress_cos;
    QueueId_t          qid;
    bit<3>             icos_for_copy_to_cpu;
    bit<1>             copy_to_cpu;
    bit<2>             packet_color;
    bit<1>             disable_ucast_cutthru;
    bit<1>             enable_mcast_cutthru;
    MulticastGroupId_t mcast_grp_a;
    MulticastGroupId_t mcast_grp_b;
    bit<13>            level1_mcast_hash;
    bit<13>            level2_mcast_hash;
    L1ExclusionId_t    level1_exclusion_id;
    L2ExclusionId_t    level2_exclusion_id;
    bit<16>            rid;
}

/* Set by the ingress parser. */
@__intrinsic_metadata
struct ingress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;
    bit<32> global_ver;
    bit<16> parser_err;
}

/* What ingress tells its deparser (drop, digest, resubmit, mirror). */
@__intrinsic_metadata
struct ingress_intrinsic_metadata_for_deparser_t {
    bit<3>         drop_ctl;      /* bit 0: drop; bit 1: no copy-to-cpu; bit 2: no mirror */
    DigestType_t   digest_type;
    ResubmitType_t resubmit_type;
    MirrorType_t   mirror_type;
#if PISA_TOFINO_GEN == 2
    bit<1>         mirror_io_select;
    bit<13>        mirror_hash;
    bit<3>         mirror_ingress_cos;
    bit<1>         mirror_deflect_on_drop;
    bit<1>         mirror_multicast_ctrl;
    PortId_t       mirror_egress_port;
    QueueId_t      mirror_qid;
    bit<8>         mirror_coalesce_length;
    bit<32>        adv_flow_ctl;
    bit<14>        mtu_trunc_len;
    bit<1>         mtu_trunc_err_f;
    bit<1>         pktgen;
    bit<14>        pktgen_address;
    bit<10>        pktgen_length;
#endif
}

#if PISA_TOFINO_GEN == 2
/* Queue-state updates delivered to the ghost thread (Tofino 2 only). */
@__intrinsic_metadata @__ghost_metadata
header ghost_intrinsic_metadata_t {
    bit<1>  ping_pong;
    bit<18> qlength;
    bit<11> qid;
    bit<2>  pipe_id;
}
#endif

/* ---- egress intrinsic metadata ---- */

/* Prepended by the traffic manager; the first thing the egress parser extracts. */
@__intrinsic_metadata
header egress_intrinsic_metadata_t {
    @padding bit<7> _pad0;
    PortId_t egress_port;
    @padding bit<5> _pad1;
    bit<19>  enq_qdepth;          /* queue depth at enqueue, in cells */
    @padding bit<6> _pad2;
    bit<2>   enq_congest_stat;
#if PISA_TOFINO_GEN == 1
    @padding bit<14> _pad3;
    bit<18>  enq_tstamp;          /* ns */
    @padding bit<5> _pad4;
#else
    bit<32>  enq_tstamp;          /* ns */
    @padding bit<5> _pad3;
#endif
    bit<19>  deq_qdepth;
#if PISA_TOFINO_GEN == 1
    @padding bit<6> _pad5;
#else
    @padding bit<6> _pad4;
#endif
    bit<2>   deq_congest_stat;
    bit<8>   app_pool_congest_stat;
#if PISA_TOFINO_GEN == 1
    @padding bit<14> _pad6;
    bit<18>  deq_timedelta;
    bit<16>  egress_rid;          /* RID of this multicast copy, 0 for unicast */
    @padding bit<7> _pad7;
    bit<1>   egress_rid_first;
    @padding bit<PISA_QUEUE_ID_PAD> _pad8;
    QueueId_t egress_qid;
    @padding bit<5> _pad9;
    bit<3>   egress_cos;
    @padding bit<7> _pad10;
    bit<1>   deflection_flag;
    bit<16>  pkt_length;
#else
    bit<32>  deq_timedelta;
    bit<16>  egress_rid;          /* RID of this multicast copy, 0 for unicast */
    @padding bit<7> _pad5;
    bit<1>   egress_rid_first;
    @padding bit<1> _pad6;
    QueueId_t egress_qid;
    @padding bit<5> _pad7;
    bit<3>   egress_cos;
    @padding bit<7> _pad8;
    bit<1>   deflection_flag;
    bit<16>  pkt_length;
    @padding bit<8> _pad9;
#endif
}

/* Set by the egress parser. */
@__intrinsic_metadata
struct egress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;
    bit<32> global_ver;
    bit<16> parser_err;
}

/* What egress tells its deparser. */
@__intrinsic_metadata
struct egress_intrinsic_metadata_for_deparser_t {
    bit<3>       drop_ctl;
    MirrorType_t mirror_type;
    bit<1>       coalesce_flush;
    bit<7>       coalesce_length;
#if PISA_TOFINO_GEN == 2
    bit<1>       mirror_io_select;
    bit<13>      mirror_hash;
    bit<3>       mirror_ingress_cos;
    bit<1>       mirror_deflect_on_drop;
    bit<1>       mirror_multicast_ctrl;
    PortId_t     mirror_egress_port;
    QueueId_t    mirror_qid;
    bit<8>       mirror_coalesce_length;
    bit<32>      adv_flow_ctl;
    bit<14>      mtu_trunc_len;
    bit<1>       mtu_trunc_err_f;
#endif
}

/* What egress tells the output port (PTP timestamping). */
@__intrinsic_metadata
struct egress_intrinsic_metadata_for_output_port_t {
    bit<1> capture_tstamp_on_tx;
    bit<1> update_delay_on_tx;
}

/* ---- packet generator headers (after the port metadata of generated packets) ---- */
#if PISA_TOFINO_GEN == 1
header pktgen_timer_header_t {
    @padding bit<3> _pad1;
    bit<2>  pipe_id;
    bit<3>  app_id;
    @padding bit<8> _pad2;
    bit<16> batch_id;
    bit<16> packet_id;
}

header pktgen_port_down_header_t {
    @padding bit<3> _pad1;
    bit<2>   pipe_id;
    bit<3>   app_id;
    @padding bit<15> _pad2;
    PortId_t port_num;
    bit<16>  packet_id;
}

header pktgen_recirc_header_t {
    @padding bit<3> _pad1;
    bit<2>  pipe_id;
    bit<3>  app_id;
    bit<24> key;
    bit<16> packet_id;
}
#else
header pktgen_timer_header_t {
    @padding bit<2> _pad1;
    bit<2>  pipe_id;
    bit<4>  app_id;
    @padding bit<8> _pad2;
    bit<16> batch_id;
    bit<16> packet_id;
}

header pktgen_port_down_header_t {
    @padding bit<2> _pad1;
    bit<2>   pipe_id;
    bit<4>   app_id;
    @padding bit<15> _pad2;
    PortId_t port_num;
    bit<16>  packet_id;
}

header pktgen_recirc_header_t {
    @padding bit<2> _pad1;
    bit<2>  pipe_id;
    bit<4>  app_id;
    @padding bit<8> _pad2;
    bit<16> batch_id;
    bit<16> packet_id;
}

header pktgen_deparser_header_t {
    @padding bit<2> _pad1;
    bit<2>  pipe_id;
    bit<4>  app_id;
    @padding bit<8> _pad2;
    bit<16> batch_id;
    bit<16> packet_id;
}

header pktgen_pfc_header_t {
    @padding bit<2> _pad1;
    bit<2>  pipe_id;
    bit<4>  app_id;
    @padding bit<40> _pad2;
}
#endif

/* PTP correction-field update instructions for the output port. */
header ptp_metadata_t {
    bit<8>  udp_cksum_byte_offset;
    bit<8>  cf_byte_offset;
    bit<48> updated_cf;
}

/* ---- parser externs ---- */

/* One's-complement 16-bit checksum unit (parser: verify/residual; deparser: update). */
extern Checksum {
    Checksum();
    void add<T>(in T data);
    void subtract<T>(in T data);
    bool verify();
    bit<16> get();
    void subtract_all_and_deposit<T>(out T residual);
    bit<16> update<T>(in T data, @optional in bool zeros_as_ones);
}

/* The parser's loop counter. */
extern ParserCounter {
    ParserCounter();
    void set<T>(in T value);
#if PISA_TOFINO_GEN == 1
    void set<T>(in T field, in bit<8> max, in bit<8> rotate, in bit<3> mask, in bit<8> add);
#else
    void set<T>(in T field, in bit<8> max, in bit<8> rotate, in bit<8> mask, in bit<8> add);
    void push<T>(in T value, @optional bool update_with_top);
    void push<T>(in T field, in bit<8> max, in bit<8> rotate, in bit<8> mask, in bit<8> add,
                 @optional bool update_with_top);
    void pop();
#endif
    bool is_zero();
    bool is_negative();
    void increment(in bit<8> value);
    void decrement(in bit<8> value);
}

/* Sets the priority of the packet in the ingress buffer. */
extern ParserPriority {
    ParserPriority();
    void set(in bit<3> prio);
}

/* ---- hashing and randomness ---- */

/* A CRC definition for Hash(HashAlgorithm_t.CUSTOM, poly). */
extern CRCPolynomial<T> {
    CRCPolynomial(T coeff, bool reversed, bool msb, bool extended, T init, T xor);
}

extern Hash<W> {
    Hash(HashAlgorithm_t algo);
    Hash(HashAlgorithm_t algo, CRCPolynomial<_> poly);
    W get<D>(in D data);
}

extern Random<W> {
    Random();
    W get();
}

#if PISA_TOFINO_GEN == 2
extern IdleTimeout {
    IdleTimeout();
}
#endif

/* ---- helper functions ---- */
extern T max<T>(in T t1, in T t2);
extern T min<T>(in T t1, in T t2);
extern void funnel_shift_right<T>(out T dst, in T src1, in T src2, int shift_amount);
extern void invalidate<T>(in T field);
extern bool is_validated<T>(in T field);
extern T port_metadata_unpack<T>(packet_in pkt);
extern bit<32> sizeInBits<H>(in H h);
extern bit<32> sizeInBytes<H>(in H h);

/* ---- statistics ---- */
/* adjust_byte_count: a constant subtracted from every packet's length (a length below it
 * counts 0); one value per counter or meter, at most 8192. true_egress_accounting (Tofino 2's
 * t2na.p4 only; egress, byte counting): count the packet as the egress deparser sends it. */
#if PISA_TOFINO_GEN == 2
@noWarn("unused")
extern Counter<W, I> {
    Counter(bit<32> size, CounterType_t type, @optional bool true_egress_accounting);
    void count(in I index, @optional in bit<32> adjust_byte_count);
}

@noWarn("unused")
extern DirectCounter<W> {
    DirectCounter(CounterType_t type, @optional bool true_egress_accounting);
    void count(@optional in bit<32> adjust_byte_count);
}

extern Meter<I> {
    Meter(bit<32> size, MeterType_t type, @optional bool true_egress_accounting);
    Meter(bit<32> size, MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green,
          @optional bool true_egress_accounting);
    bit<8> execute(in I index, in MeterColor_t color, @optional in bit<32> adjust_byte_count);
    bit<8> execute(in I index, @optional in bit<32> adjust_byte_count);
}

extern DirectMeter {
    DirectMeter(MeterType_t type, @optional bool true_egress_accounting);
    DirectMeter(MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green,
                @optional bool true_egress_accounting);
    bit<8> execute(in MeterColor_t color, @optional in bit<32> adjust_byte_count);
    bit<8> execute(@optional in bit<32> adjust_byte_count);
}
#else
@noWarn("unused")
extern Counter<W, I> {
    Counter(bit<32> size, CounterType_t type);
    void count(in I index, @optional in bit<32> adjust_byte_count);
}

@noWarn("unused")
extern DirectCounter<W> {
    DirectCounter(CounterType_t type);
    void count(@optional in bit<32> adjust_byte_count);
}

extern Meter<I> {
    Meter(bit<32> size, MeterType_t type);
    Meter(bit<32> size, MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green);
    bit<8> execute(in I index, in MeterColor_t color, @optional in bit<32> adjust_byte_count);
    bit<8> execute(in I index, @optional in bit<32> adjust_byte_count);
}

extern DirectMeter {
    DirectMeter(MeterType_t type);
    DirectMeter(MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green);
    bit<8> execute(in MeterColor_t color, @optional in bit<32> adjust_byte_count);
    bit<8> execute(@optional in bit<32> adjust_byte_count);
}
#endif

/* Low-pass filter. */
extern Lpf<T, I> {
    Lpf(bit<32> size);
    T execute(in T val, in I index);
}

extern DirectLpf<T> {
    DirectLpf();
    T execute(in T val);
}

/* Weighted random early detection. */
extern Wred<T, I> {
    Wred(bit<32> size, bit<8> drop_value, bit<8> no_drop_value);
    bit<8> execute(in T val, in I index);
}

extern DirectWred<T> {
    DirectWred(bit<8> drop_value, bit<8> no_drop_value);
    bit<8> execute(in T val);
}

/* ---- stateful memory ---- */
extern Register<T, I> {
    Register(bit<32> size);
    Register(bit<32> size, T initial_value);
    T read(in I index);
#if PISA_TOFINO_GEN == 2
    /* Tofino 2 (tofino2_base.p4): write returns the value written, the cell's new value. */
    T write(in I index, in T value);
    /* Tofino 2: set every cell to `value` (constant arguments). */
    void clear(in T value, @optional in T busy);
#else
    void write(in I index, in T value);
#endif
}

extern DirectRegister<T> {
    DirectRegister();
    DirectRegister(T initial_value);
    T read();
#if PISA_TOFINO_GEN == 2
    T write(in T value);
    void clear(in T value, @optional in T busy);
#else
    void write(in T value);
#endif
}

/* A run-time settable constant for register actions. */
extern RegisterParam<T> {
    RegisterParam(T initial_value);
    T read();
}

/* The stateful ALU's math unit. */
extern MathUnit<T> {
    MathUnit(bool invert, int<2> shift, int<6> scale,
             tuple<bit<8>, bit<8>, bit<8>, bit<8>, bit<8>, bit<8>, bit<8>, bit<8>,
                   bit<8>, bit<8>, bit<8>, bit<8>, bit<8>, bit<8>, bit<8>, bit<8>> data);
    MathUnit(MathOp_t op, int factor);
    MathUnit(MathOp_t op, int A, int B);
    T execute(in T x);
}

#if PISA_TOFINO_GEN == 1
/* A stateful-ALU program over a Register: the user writes apply() in the initializer. */
extern RegisterAction<T, I, U> {
    RegisterAction(Register<T, _> reg);
    U execute(in I index);
    U execute_log();
    @synchronous(execute, execute_log)
    abstract void apply(inout T value, @optional out U rv);
    U predicate(@optional in bool cmplo, @optional in bool cmphi);
}

extern DirectRegisterAction<T, U> {
    DirectRegisterAction(DirectRegister<T> reg);
    U execute();
    @synchronous(execute)
    abstract void apply(inout T value, @optional out U rv);
    U predicate(@optional in bool cmplo, @optional in bool cmphi);
}
#else
/* Tofino 2's stateful ALU: up to four outputs, four comparisons, FIFO/stack access and
 * min/max over a word. The user writes apply() in the initializer. */
extern RegisterAction<T, H, U> {
    RegisterAction(Register<_, _> reg);
    U execute(@optional in H index, @optional out U rv2, @optional out U rv3,
              @optional out U rv4);
    U execute_log(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    U enqueue(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    U dequeue(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    U push(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    U pop(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    /* Run apply on every cell (pisa: all at once, as Register.clear). */
    void sweep(@optional in U busy);
    @synchronous(execute, execute_log, enqueue, dequeue, push, pop, sweep)
    abstract void apply(inout T value, @optional out U rv1, @optional out U rv2,
                        @optional out U rv3, @optional out U rv4);
    /* Run instead of apply by a push/enqueue on a full stack/FIFO, a pop/dequeue on an
     * empty one (the counter does not move). */
    @synchronous(enqueue, push)
    @optional abstract void overflow(@optional inout T value, @optional out U rv1,
                                     @optional out U rv2, @optional out U rv3,
                                     @optional out U rv4);
    @synchronous(dequeue, pop)
    @optional abstract void underflow(@optional inout T value, @optional out U rv1,
                                      @optional out U rv2, @optional out U rv3,
                                      @optional out U rv4);
    U address(@optional bit<1> subword);
    U predicate(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern DirectRegisterAction<T, U> {
    DirectRegisterAction(DirectRegister<T> reg);
    U execute(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    @synchronous(execute)
    abstract void apply(inout T value, @optional out U rv, @optional out U rv2,
                        @optional out U rv3, @optional out U rv4);
    U address(@optional bit<1> subword);
    U predicate(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}
/* One type per output: RegisterActionN returns U1 and hands rv2..rvN back through `out`. */
extern RegisterAction2<T, H, U1, U2> {
    RegisterAction2(Register<_, _> reg);
    U1 execute(in H index, out U2 rv2);
    U1 execute_log(out U2 rv2);
    U1 enqueue(out U2 rv2);
    U1 dequeue(out U2 rv2);
    U1 push(out U2 rv2);
    U1 pop(out U2 rv2);
    @synchronous(execute, execute_log, enqueue, dequeue, push, pop)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2);
    @synchronous(enqueue, push)
    @optional abstract void overflow(@optional inout T value, out U1 rv1, out U2 rv2);
    @synchronous(dequeue, pop)
    @optional abstract void underflow(@optional inout T value, out U1 rv1, out U2 rv2);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern RegisterAction3<T, H, U1, U2, U3> {
    RegisterAction3(Register<_, _> reg);
    U1 execute(in H index, out U2 rv2, out U3 rv3);
    U1 execute_log(out U2 rv2, out U3 rv3);
    U1 enqueue(out U2 rv2, out U3 rv3);
    U1 dequeue(out U2 rv2, out U3 rv3);
    U1 push(out U2 rv2, out U3 rv3);
    U1 pop(out U2 rv2, out U3 rv3);
    @synchronous(execute, execute_log, enqueue, dequeue, push, pop)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2, out U3 rv3);
    @synchronous(enqueue, push)
    @optional abstract void overflow(@optional inout T value, out U1 rv1, out U2 rv2, out U3 rv3);
    @synchronous(dequeue, pop)
    @optional abstract void underflow(@optional inout T value, out U1 rv1, out U2 rv2, out U3 rv3);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern RegisterAction4<T, H, U1, U2, U3, U4> {
    RegisterAction4(Register<_, _> reg);
    U1 execute(in H index, out U2 rv2, out U3 rv3, out U4 rv4);
    U1 execute_log(out U2 rv2, out U3 rv3, out U4 rv4);
    U1 enqueue(out U2 rv2, out U3 rv3, out U4 rv4);
    U1 dequeue(out U2 rv2, out U3 rv3, out U4 rv4);
    U1 push(out U2 rv2, out U3 rv3, out U4 rv4);
    U1 pop(out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(execute, execute_log, enqueue, dequeue, push, pop)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(enqueue, push)
    @optional abstract void overflow(@optional inout T value, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(dequeue, pop)
    @optional abstract void underflow(@optional inout T value, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern DirectRegisterAction2<T, U1, U2> {
    DirectRegisterAction2(DirectRegister<T> reg);
    U1 execute(out U2 rv2);
    @synchronous(execute)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern DirectRegisterAction3<T, U1, U2, U3> {
    DirectRegisterAction3(DirectRegister<T> reg);
    U1 execute(out U2 rv2, out U3 rv3);
    @synchronous(execute)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2, out U3 rv3);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern DirectRegisterAction4<T, U1, U2, U3, U4> {
    DirectRegisterAction4(DirectRegister<T> reg);
    U1 execute(out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(execute)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}
/* The min/max unit: apply() sees the register's whole 128-bit memory word (16 8-bit or 8
 * 16-bit cells; `index` picks the word) and this.min8/max8/min16/max16 pick a lane. */
extern MinMaxAction<T, H, U> {
    MinMaxAction(Register<T, _> reg);
    U execute(@optional in H index, @optional out U rv2, @optional out U rv3,
              @optional out U rv4);
    @synchronous(execute)
    abstract void apply(inout bit<128> value, @optional out U rv1, @optional out U rv2,
                        @optional out U rv3, @optional out U rv4);
    U address(@optional bit<1> subword);
    U predicate(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                @optional in bool cmp3);
    bit<8> min8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<8> postmod);
    bit<8> max8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<8> postmod);
    bit<16> min16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<8> postmod);
    bit<16> max16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<8> postmod);
}

extern MinMaxAction2<T, H, U1, U2> {
    MinMaxAction2(Register<T, _> reg);
    U1 execute(@optional in H index, out U2 rv2);
    @synchronous(execute)
    abstract void apply(inout bit<128> value, out U1 rv1, out U2 rv2);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<9> postmod);
    bit<8> max8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<9> postmod);
    bit<16> min16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<9> postmod);
    bit<16> max16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<9> postmod);
}

extern MinMaxAction3<T, H, U1, U2, U3> {
    MinMaxAction3(Register<T, _> reg);
    U1 execute(@optional in H index, out U2 rv2, out U3 rv3);
    @synchronous(execute)
    abstract void apply(inout bit<128> value, out U1 rv1, out U2 rv2, out U3 rv3);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<9> postmod);
    bit<8> max8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<9> postmod);
    bit<16> min16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<9> postmod);
    bit<16> max16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<9> postmod);
}

extern MinMaxAction4<T, H, U1, U2, U3, U4> {
    MinMaxAction4(Register<T, _> reg);
    U1 execute(@optional in H index, out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(execute)
    abstract void apply(inout bit<128> value, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<9> postmod);
    bit<8> max8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<9> postmod);
    bit<16> min16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<9> postmod);
    bit<16> max16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<9> postmod);
}

/* Hardware learning: declared as t2na.p4 does, refused by pisa (not modelled). */
extern LearnAction<T, H, D, U> {
    LearnAction(Register<T, H> reg);
    U execute(in H index, @optional out U rv2, @optional out U rv3, @optional out U rv4);
    @synchronous(execute)
    abstract void apply(inout T value, in D digest, in bool learn, @optional out U rv1,
                        @optional out U rv2, @optional out U rv3, @optional out U rv4);
}
extern LearnAction2<T, H, D, U1, U2> {
    LearnAction2(Register<T, H> reg);
    U1 execute(in H index, out U2 rv2);
    @synchronous(execute)
    abstract void apply(inout T value, in D digest, in bool learn, out U1 rv1, out U2 rv2);
}
extern LearnAction3<T, H, D, U1, U2, U3> {
    LearnAction3(Register<T, H> reg);
    U1 execute(in H index, out U2 rv2, out U3 rv3);
    @synchronous(execute)
    abstract void apply(inout T value, in D digest, in bool learn, out U1 rv1, out U2 rv2, out U3 rv3);
}
extern LearnAction4<T, H, D, U1, U2, U3, U4> {
    LearnAction4(Register<T, H> reg);
    U1 execute(in H index, out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(execute)
    abstract void apply(inout T value, in D digest, in bool learn, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
}
#endif

/* ---- action data indirection ---- */
extern ActionProfile {
    ActionProfile(bit<32> size);
}

extern ActionSelector {
    ActionSelector(ActionProfile action_profile, Hash<_> hash, SelectorMode_t mode,
                   bit<32> max_group_size, bit<32> num_groups);
    ActionSelector(ActionProfile action_profile, Hash<_> hash, SelectorMode_t mode,
                   Register<bit<1>, _> reg, bit<32> max_group_size, bit<32> num_groups);
    @deprecated("ActionSelector must be specified with an associated ActionProfile")
    ActionSelector(bit<32> size, Hash<_> hash, SelectorMode_t mode);
    @deprecated("ActionSelector must be specified with an associated ActionProfile")
    ActionSelector(bit<32> size, Hash<_> hash, SelectorMode_t mode, Register<bit<1>, _> reg);
}

extern SelectorAction {
    SelectorAction(ActionSelector sel);
    bit<1> execute(@optional in bit<32> index);
    @synchronous(execute)
    abstract void apply(inout bit<1> value, @optional out bit<1> rv);
}

/* ---- deparser externs ---- */

/* Mirror the packet to a session; only in deparsers. `Mirror()` is emitted under an `if` naming
   its mirror table entry; `Mirror(type)` is the entry for that mirror_type (both chips, as
   bf-p4c's tofino1_base.p4 / tofino2_base.p4 declare them; likewise Resubmit and Digest). */
extern Mirror {
    @deprecated("Mirror must be specified with the value of the mirror_type instrinsic metadata")
    Mirror();
    Mirror(MirrorType_t mirror_type);
    void emit(in MirrorId_t session_id);
    void emit<T>(in MirrorId_t session_id, in T hdr);
}

extern Resubmit {
    @deprecated("Resubmit must be specified with the value of the resubmit_type instrinsic metadata")
    Resubmit();
    Resubmit(ResubmitType_t resubmit_type);
    void emit();
    void emit<T>(in T hdr);
}

/* Learn digests to the control plane. */
extern Digest<T> {
    @deprecated("Digest must be specified with the value of the digest_type instrinsic metadata")
    Digest();
    Digest(DigestType_t digest_type);
    void pack(in T data);
}

#if PISA_TOFINO_GEN == 2
/* Packet generator trigger from the ingress deparser (Tofino 2). */
extern Pktgen {
    Pktgen();
    void emit<T>(in T hdr);
}
#endif

/* ---- algorithmic table implementations ---- */
extern Atcam {
    Atcam(@optional bit<32> number_partitions);
}

extern Alpm {
    Alpm(@optional bit<32> number_partitions, @optional bit<32> subtrees_per_partition,
         @optional bit<32> atcam_subset_width, @optional bit<32> shift_granularity);
}

#endif /* PISA_TOFINO_BASE_P4 */
