/* pisa: Tofino 1 device types and constants (widths follow Intel's public TNA definitions). */
#ifndef PISA_TOFINO1_SPECS_P4
#define PISA_TOFINO1_SPECS_P4

#define _TOFINO1_P4_SPECS_

#include <core.p4>

#define PORT_ID_WIDTH             9
#define MULTICAST_GROUP_ID_WIDTH  16
#define QUEUE_ID_WIDTH            5
#define MIRROR_TYPE_WIDTH         3
#define MIRROR_ID_WIDTH           10
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

/* A device port's pipe and its port within the pipe. */
#define DEVPORT_PIPE_MASK 0x180
#define DEVPORT_PIPE(port) (port)[8:7]
#define DEVPORT_PORT_MASK 0x7f
#define DEVPORT_PORT(port) (port)[6:0]

typedef error ParserError_t;

/* Bits of port metadata (or resubmit data) after the ingress intrinsic metadata. */
const bit<32> PORT_METADATA_SIZE = 32w64;

/* Padding before a QueueId_t in a byte (8 - QueueId_t width). */
#define PISA_QUEUE_ID_PAD 3

#endif
