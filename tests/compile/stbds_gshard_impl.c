/* stbds_gshard_impl.c - gshard's implementation TU (which also emits stb_ds's implementation). */
#define GSHARD_IMPLEMENTATION
#include "../../gshard.h"
