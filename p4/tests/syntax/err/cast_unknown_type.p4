const bit<8> A = (port_t) 5;
typedef bit<9> port_t;
const port_t B = (port_t) 5;
