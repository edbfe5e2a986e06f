/* pisa: the Tofino Native Architecture for Tofino 2. Include with `#include <t2na.p4>`.
 * T2NA runs on Tofino 2 only (`--target tofino2`, `__TARGET_TOFINO__ == 2`). */
#ifndef PISA_T2NA_P4
#define PISA_T2NA_P4

#ifdef PISA_TOFINO_GEN
#error "tna.p4 and t2na.p4 cannot both be included"
#endif
#define PISA_TOFINO_GEN 2
#define _TOFINO2_NATIVE_ARCHITECTURE_

#if __TARGET_TOFINO__ != 2
#error "t2na.p4 (the Tofino 2 native architecture) cannot run on this target: compile with --target tofino2, or include tna.p4 for Tofino 1"
#endif

#include <core.p4>
#include <tofino2_specs.p4>
#include <tofino_base.p4>
#include <tofino_arch.p4>

#endif /* PISA_T2NA_P4 */
