/* pisa: the Tofino Native Architecture (Tofino 1). Include with `#include <tna.p4>`. */
#ifndef PISA_TNA_P4
#define PISA_TNA_P4

#ifdef PISA_TOFINO_GEN
#error "tna.p4 and t2na.p4 cannot both be included"
#endif
#define PISA_TOFINO_GEN 1

#include <core.p4>
#include <tofino1_specs.p4>
#include <tofino_base.p4>
#include <tofino_arch.p4>

#endif /* PISA_TNA_P4 */
