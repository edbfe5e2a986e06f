/* pisa: Tofino 2 device types and constants (widths follow Intel's public T2NA definitions). */
#ifndef PISA_TOFINO2_SPECS_P4
#define PISA_TOFINO2_SPECS_P4

#include <core.p4>

typedef bit<9>  PortId_t;            /* ingress or egress port */
typedef bit<16> MulticastGroupId_t;  /* PRE multicast group */
typedef bit<7>  QueueId_t;           /* egress queue */
typedef bit<4>  MirrorType_t;        /* selects the mirror header layout */
typedef bit<8>  MirrorId_t;          /* mirror session */
typedef bit<3>  ResubmitType_t;
typedef bit<3>  DigestType_t;
typedef bit<16> ReplicationId_t;     /* RID of a multicast copy */
typedef bit<16> L1ExclusionId_t;
typedef bit<9>  L2ExclusionId_t;
typedef MirrorType_t CloneId_t;      /* older name of MirrorType_t */
typedef error ParserError_t;

/* Bits of port metadata (or resubmit data) after the ingress intrinsic metadata. */
const bit<32> PORT_METADATA_SIZE = 32w192;

/* Padding before a QueueId_t in a byte (8 - QueueId_t width). */
#define PISA_QUEUE_ID_PAD 1

#endif
