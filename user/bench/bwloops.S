/* The shared bandwidth loops (bench/common/bwloops.S). */
#include "../../bench/common/bwloops.S"
