#include <core.p4>
#defne WIDTH 8
#if 1 +
#endif
#endif
