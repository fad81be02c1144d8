# One static library per folder of src/ ("layer"), each linking only the layers it may use.
#
#   fusetune_layer(NAME [DEPS layer...] [SOURCES extra.cpp...] [LIBS target...] [ALSO_INCLUDES prefix...])
#
# builds `ft_NAME` from src/NAME/**/*.cpp (subfolders too: tune/search/ is part of tune). The layering is enforced twice, both at configure time:
#  - a DEPS entry must name a layer declared before this one, so the declared graph is acyclic by
#    construction (a layer cannot name one declared after it);
#  - every `#include "X/..."` in src/NAME/ must name NAME itself, one of its DEPS, or an
#    ALSO_INCLUDES prefix. A back edge (a lower folder including a higher one) fails configure
#    with the file, the line and the allowed list, before anything compiles.
# The declared order is written out once, in CMakeLists.txt, and quoted in the README.
set(FUSETUNE_LAYERS "" CACHE INTERNAL "layers declared so far, lowest first")
# The most lines a file of src/ may have (issue 40: no C++ file over 400 lines).
if(NOT DEFINED FUSETUNE_MAX_LINES)
  set(FUSETUNE_MAX_LINES 400)
endif()
# Where the layers' folders are (tests/layering/ points it at its fixtures).
if(NOT DEFINED FUSETUNE_LAYER_ROOT)
  set(FUSETUNE_LAYER_ROOT ${CMAKE_SOURCE_DIR}/src)
endif()

function(fusetune_layer name)
  cmake_parse_arguments(L "" "" "DEPS;SOURCES;LIBS;ALSO_INCLUDES" ${ARGN})
  foreach(dep ${L_DEPS})
    if(NOT dep IN_LIST FUSETUNE_LAYERS)
      message(FATAL_ERROR "layer '${name}' depends on '${dep}', which is not declared before it: "
                          "the layers must be declared lowest first (declared so far: ${FUSETUNE_LAYERS})")
    endif()
  endforeach()

  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${FUSETUNE_LAYER_ROOT}/${name}/*.cpp)
  list(FILTER sources EXCLUDE REGEX ".*/src/cli/main\\.cpp$")
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS ${FUSETUNE_LAYER_ROOT}/${name}/*.hpp)
  set(allowed ${name} ${L_DEPS} ${L_ALSO_INCLUDES})
  foreach(f ${sources} ${headers})
    # Small files with one job each: a source past FUSETUNE_MAX_LINES lines fails configure (a
    # class that grows past it is doing two jobs; kernel templates are not in src/ and may be longer).
    file(READ ${f} text)
    string(REGEX MATCHALL "\n" newlines "${text}")
    list(LENGTH newlines line_count)
    if(line_count GREATER FUSETUNE_MAX_LINES)
      file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${f})
      message(FATAL_ERROR "${rel}: ${line_count} lines, more than ${FUSETUNE_MAX_LINES}: split it by job "
                          "(STYLE.md: small files with one job each)")
    endif()
    file(STRINGS ${f} includes REGEX "^#include \"[a-z_]+/")
    foreach(line ${includes})
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" folder "${line}")
      if(NOT folder IN_LIST allowed)
        file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${f})
        message(FATAL_ERROR "${rel}: '${line}' reaches layer '${folder}', which '${name}' may not use "
                            "(allowed: ${allowed}); see the layer order in CMakeLists.txt")
      endif()
    endforeach()
  endforeach()

  add_library(ft_${name} STATIC ${sources} ${L_SOURCES})
  target_include_directories(ft_${name} PUBLIC ${FUSETUNE_LAYER_ROOT})
  target_include_directories(ft_${name} SYSTEM PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_options(ft_${name} PRIVATE ${FUSETUNE_WARNINGS})
  set(dep_targets "")
  foreach(dep ${L_DEPS})
    list(APPEND dep_targets ft_${dep})
  endforeach()
  target_link_libraries(ft_${name} PUBLIC ${dep_targets} ${L_LIBS})
  set(FUSETUNE_LAYERS ${FUSETUNE_LAYERS} ${name} CACHE INTERNAL "layers declared so far, lowest first")
endfunction()
