#include <core.p4>
#include "no_such_file.p4"
#include <v1model.p4>
