/* pisa: the Tofino Native Architecture. Include with `#include <tna.p4>`.
 *
 * Like Intel's header, TNA runs on Tofino 1 and on Tofino 2: the device types and constants
 * (QueueId_t, MirrorType_t, MirrorId_t, PORT_METADATA_SIZE, ...) follow the target the program
 * is compiled for (`__TARGET_TOFINO__`, set by `--target`), while the externs, intrinsic
 * metadata layouts and packages stay Tofino 1's. */
#ifndef PISA_TNA_P4
#define PISA_TNA_P4

#ifdef PISA_TOFINO_GEN
#error "tna.p4 and t2na.p4 cannot both be included"
#endif
#define PISA_TOFINO_GEN 1
#define _TOFINO1_NATIVE_ARCHITECTURE_

#include <core.p4>
#if __TARGET_TOFINO__ == 1
#include <tofino1_specs.p4>
#elif __TARGET_TOFINO__ == 2
#include <tofino2_specs.p4>
#else
#error "tna.p4 needs a Tofino target: compile with --target tofino1 or --target tofino2 (__TARGET_TOFINO__ 1 or 2)"
#endif
#include <tofino_base.p4>
#include <tofino_arch.p4>

#endif /* PISA_TNA_P4 */
