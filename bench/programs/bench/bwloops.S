/* The shared bandwidth loops (bench/common/bwloops.S). */
#include "../../common/bwloops.S"
