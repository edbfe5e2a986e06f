/* pisa: Tofino 2 device types and constants (widths follow Intel's public T2NA definitions). */
#ifndef PISA_TOFINO2_SPECS_P4
#define PISA_TOFINO2_SPECS_P4

#define _TOFINO2_P4_SPECS_

#include <core.p4>

#define PORT_ID_WIDTH             9
#define MULTICAST_GROUP_ID_WIDTH  16
#define QUEUE_ID_WIDTH            7
#define MIRROR_TYPE_WIDTH         4
#define MIRROR_ID_WIDTH           8
#define RESUBMIT_TYPE_WIDTH       3
#define DIGEST_TYPE_WIDTH         3
#define REPLICATION_ID_WIDTH      16
#define L1_EXCLUSION_ID_WIDTH     16
#define L2_EXCLUSION_ID_WIDTH     9

typedef bit<PORT_ID_WIDTH> PortId_t;              /* ingress or egress port */
typedef bit<MULTICAST_GROUP_ID_WIDTH> MulticastGroupId_t; /* PRE multicast group */
typedef bit<QUEUE_ID_WIDTH> QueueId_t;            /* egress queue */
typedef bit<MIRROR_TYPE_WIDTH> MirrorType_t;      /* selects the mirror header layout */
typedef bit<MIRROR_ID_WIDTH> MirrorId_t;          /* mirror session */
typedef bit<RESUBMIT_TYPE_WIDTH> ResubmitType_t;
typedef bit<DIGEST_TYPE_WIDTH> DigestType_t;
typedef bit<REPLICATION_ID_WIDTH> ReplicationId_t; /* RID of a multicast copy */
typedef bit<L1_EXCLUSION_ID_WIDTH> L1ExclusionId_t;
typedef bit<L2_EXCLUSION_ID_WIDTH> L2ExclusionId_t;
typedef MirrorType_t CloneId_t;                  /* older name of MirrorType_t */

/* A device port's pipe and its port within the pipe. */
#define DEVPORT_PIPE_MASK 0x180
#define DEVPORT_PIPE(port) (port)[8:7]
#define DEVPORT_PORT_MASK 0x7f
#define DEVPORT_PORT(port) (port)[6:0]

typedef error ParserError_t;

/* Bits of port metadata (or resubmit data) after the ingress intrinsic metadata. */
const bit<32> PORT_METADATA_SIZE = 32w192;

/* Padding before a QueueId_t in a byte (8 - QueueId_t width). */
#define PISA_QUEUE_ID_PAD 1

#endif
