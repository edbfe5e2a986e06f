#ifdef SOMETHING
header h { bit<8> x; }
