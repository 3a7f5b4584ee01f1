# Cold code at -O1 (INASIM_COLD_O1, on): in Release builds the files that run
# once per scenario or per run, never per packet (the scenario parser and its
# section declarations, the protocols' spec.cc, the dataplanes' config.cc
# readers and program.cc builders, the reports, results.json) compile at -O1
# instead of -O3: about 40 % less compile time, no measurable run time. The
# results are the same bits: -std=c++17 (no GNU extensions) keeps FP
# contraction off and nothing is built with -ffast-math, so -O1 and -O3
# compute the same IEEE values (the golden runs check it). The packet path
# (devices, switch node, dataplanes, host agents) keeps the build type's flags.
option(INASIM_COLD_O1 "compile run-once code (parsing, specs, reports) at -O1 in Release builds" ON)
set(INASIM_COLD_SOURCES_REGEX "(^|/)(spec|config|program|scenario[-a-z]*|results|spec_fields|[a-z0-9_]+-report)\\.cc$")

# inasim_compile_cold(<target>): marks the target's sources that match
# INASIM_COLD_SOURCES_REGEX.
function(inasim_compile_cold target)
  if(NOT INASIM_COLD_O1)
    return()
  endif()
  get_target_property(_srcs ${target} SOURCES)
  foreach(_s IN LISTS _srcs)
    if(_s MATCHES "${INASIM_COLD_SOURCES_REGEX}")
      set_source_files_properties(${_s} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS "$<$<CONFIG:Release>:-O1>")
    endif()
  endforeach()
endfunction()
