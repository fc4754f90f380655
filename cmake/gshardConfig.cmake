# gshardConfig.cmake - find_package(gshard) after `make install` or `cmake --install`: defines the INTERFACE
# target gshard::gshard (the include directory of gshard.h, plus threads and libm for the implementation TU).
# It is installed as PREFIX/share/cmake/gshard/gshardConfig.cmake, so the prefix is three levels up.
get_filename_component(_gshard_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET gshard::gshard)
  include(CMakeFindDependencyMacro)
  find_dependency(Threads)
  add_library(gshard::gshard INTERFACE IMPORTED)
  set(_gshard_libs Threads::Threads)
  if(UNIX AND NOT APPLE)
    list(APPEND _gshard_libs m)
  endif()
  set_target_properties(gshard::gshard PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_gshard_prefix}/include"
    INTERFACE_LINK_LIBRARIES "${_gshard_libs}")
  unset(_gshard_libs)
endif()
unset(_gshard_prefix)
