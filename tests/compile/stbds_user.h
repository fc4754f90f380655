/* stbds_user.h - how a user's own code includes stb_ds: the copy next to gshard.h, else the include path,
   else Debian's libstb-dev layout. */
#if defined(__has_include)
#  if __has_include("../../stb_ds.h")
#    include "../../stb_ds.h"
#  elif __has_include(<stb_ds.h>)
#    include <stb_ds.h>
#  else
#    include <stb/stb_ds.h>
#  endif
#else
#  include <stb/stb_ds.h>
#endif
