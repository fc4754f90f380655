/* impl.c - the implementation TU: declarations first, then the implementation, then a repeat include. */
#include "../../gshard.h"
#define GSHARD_IMPLEMENTATION
#include "../../gshard.h"
#include "../../gshard.h" /* GSHARD_IMPLEMENTATION_INCLUDED keeps this from emitting a second copy */
