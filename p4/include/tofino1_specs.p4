/* pisa: Tofino 1 device types and constants (widths follow Intel's public TNA definitions). */
#ifndef PISA_TOFINO1_SPECS_P4
#define PISA_TOFINO1_SPECS_P4

#include <core.p4>

typedef bit<9>  PortId_t;            /* ingress or egress port */
typedef bit<16> MulticastGroupId_t;  /* PRE multicast group */
typedef bit<5>  QueueId_t;           /* egress queue */
typedef bit<3>  MirrorType_t;        /* selects the mirror header layout */
typedef bit<10> MirrorId_t;          /* mirror session */
typedef bit<3>  ResubmitType_t;
typedef bit<3>  DigestType_t;
typedef bit<16> ReplicationId_t;     /* RID of a multicast copy */
typedef bit<16> L1ExclusionId_t;
typedef bit<9>  L2ExclusionId_t;
typedef MirrorType_t CloneId_t;      /* older name of MirrorType_t */
typedef error ParserError_t;

/* Bits of port metadata (or resubmit data) after the ingress intrinsic metadata. */
const bit<32> PORT_METADATA_SIZE = 32w64;

/* Padding before a QueueId_t in a byte (8 - QueueId_t width). */
#define PISA_QUEUE_ID_PAD 3

#endif
