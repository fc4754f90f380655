/* impl.c - the one translation unit of the test build that holds gshard's implementation */
#define GSHARD_IMPLEMENTATION
#include "../gshard.h"
