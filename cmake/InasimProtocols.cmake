# The protocol registry, generated at configure time from every
# protocols/<name>/protocol.json (the only list of protocols; adding a folder
# adds a protocol). Static initialisers in static libraries would be dropped
# by the linker; a generated table that names each protocol's factory cannot be.
#
# inasim_protocol_registry(PREFIX <prefix> DIRS <dir>... [JSON <file>])
#   reads <dir>/*/protocol.json for every <dir> (a folder of protocol
#   folders) and writes two registries to ${CMAKE_BINARY_DIR}/generated/:
#   <prefix>_protocol_registry.cc (ns-3 side: workload factories, parsers,
#   checks) and <prefix>_dataplane_registry.cc (pure C++: dataplane programs
#   for inasim-p4, and those inasim-p4 check compares with upstream P4,
#   "model_check": true, p4model/common/model_check.h); with JSON, also the
#   registry as data. Sets in the caller:
#     <prefix>_PROTOCOLS            every protocol name, sorted
#     <prefix>_DATAPLANE_PROTOCOLS  those with a dataplane model
#     <prefix>_DIR_<name>           each protocol's folder
#     <prefix>_PROTOCOL_REGISTRY_CC, <prefix>_DATAPLANE_REGISTRY_CC
#     <prefix>_PROTOCOL_HOST_SOURCES every protocol's host/*.cc
# Each executable links exactly one generated registry (as object files, so
# the linker cannot drop it): the simulator's is INASIM_*, built from
# protocols/; a test tree may build another over more folders
# (tests/toy/: a protocol registered by adding files only).

# A JSON string array -> C++ initializer list of `prefix<mapped item>` (via _map_<item> if defined).
function(_inasim_json_list out json key prefix)
  string(JSON _n ERROR_VARIABLE _err LENGTH "${json}" ${key})
  set(_items "")
  if(NOT _err AND _n GREATER 0)
    math(EXPR _last "${_n} - 1")
    foreach(i RANGE ${_last})
      string(JSON _v GET "${json}" ${key} ${i})
      if(DEFINED _map_${_v})
        set(_v "${_map_${_v}}")
      else()
        set(_v "\"${_v}\"")
      endif()
      list(APPEND _items "${prefix}${_v}")
    endforeach()
  endif()
  list(JOIN _items ", " _joined)
  set(${out} "{${_joined}}" PARENT_SCOPE)
endfunction()

function(_inasim_json_field out json key file)
  string(JSON _v ERROR_VARIABLE _err GET "${json}" ${key})
  if(_err)
    message(FATAL_ERROR "${file}: key \"${key}\": ${_err}")
  endif()
  set(${out} "${_v}" PARENT_SCOPE)
endfunction()

set(_map_int32 "DType::kInt32")
set(_map_float32 "DType::kFloat32")
set(_map_hashed "DataPattern::kHashed")
set(_map_ones "DataPattern::kOnes")
set(_map_uniform "DataPattern::kUniform")

# Every <dir>/*/protocol.json of `dirs`, ordered by protocol (folder) name
# whichever folder it is in; `text` says where they were looked for.
function(_inasim_protocol_files out text dirs)
  set(_keyed "")
  set(_where "")
  foreach(_d IN LISTS dirs)
    file(GLOB _found CONFIGURE_DEPENDS ${_d}/*/protocol.json)
    foreach(_f IN LISTS _found)
      get_filename_component(_n ${_f} DIRECTORY)
      get_filename_component(_n ${_n} NAME)
      list(APPEND _keyed "${_n}|${_f}")
    endforeach()
    file(RELATIVE_PATH _rel ${CMAKE_SOURCE_DIR} ${_d})
    list(APPEND _where "${_rel}/*/protocol.json")
  endforeach()
  list(SORT _keyed)
  list(TRANSFORM _keyed REPLACE "^[^|]*\\|" "")
  list(JOIN _where ", " _where)
  set(${out} ${_keyed} PARENT_SCOPE)
  set(${text} "${_where}" PARENT_SCOPE)
endfunction()

# Reads one protocol.json (`_file`) and appends its rows to the registry
# being built (a macro: it works on inasim_protocol_registry's variables).
macro(_inasim_add_protocol _file)
  file(READ ${_file} _json)
  get_filename_component(_dir ${_file} DIRECTORY)
  get_filename_component(_folder ${_dir} NAME)
  foreach(_key name default workload_type summary section dtype_note uniform_note concurrent_jobs jobs_note
          min_hosts_per_job dataplane)
    _inasim_json_field(_${_key} "${_json}" ${_key} ${_file})
  endforeach()
  if(NOT _name STREQUAL _folder)
    message(FATAL_ERROR "${_file}: name \"${_name}\" must be its folder's name (\"${_folder}\")")
  endif()
  if(NOT _name MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "${_file}: name \"${_name}\" must be a C++ identifier in lower case")
  endif()
  if(NOT _workload_type MATCHES "^(allreduce|permutation)$")
    message(FATAL_ERROR "${_file}: workload_type must be \"allreduce\" or \"permutation\"")
  endif()
  if(NOT _concurrent_jobs MATCHES "^(jobs|own|none)$")
    message(FATAL_ERROR "${_file}: concurrent_jobs must be \"jobs\", \"own\" or \"none\"")
  endif()
  if(_name IN_LIST _names)
    message(FATAL_ERROR "${_file}: a protocol named \"${_name}\" is registered already (${_where})")
  endif()
  if(_json MATCHES "\\)INASIMP\"")
    message(FATAL_ERROR "${_file} contains the raw-string delimiter )INASIMP\"")
  endif()
  if(_default)
    if(DEFINED _default_protocol)
      message(FATAL_ERROR "${_file}: \"default\": true, but ${_default_protocol} is the default already")
    endif()
    if(NOT _workload_type STREQUAL "allreduce")
      message(FATAL_ERROR "${_file}: the default protocol must be an allreduce")
    endif()
    set(_default_protocol ${_name})
  endif()
  list(APPEND _names ${_name})
  set(${R_PREFIX}_DIR_${_name} ${_dir} PARENT_SCOPE)
  file(RELATIVE_PATH _rel ${CMAKE_SOURCE_DIR} ${_dir})
  file(GLOB _host CONFIGURE_DEPENDS ${_dir}/host/*.cc)
  list(APPEND _host_sources ${_host})
  # Optional: it runs workload.schedule (src/ina/iteration-schedule.h).
  string(JSON _schedule ERROR_VARIABLE _sch_err GET "${_json}" schedule)
  if(_sch_err OR NOT _schedule)
    set(_schedule false)
  else()
    set(_schedule true)
  endif()
  _inasim_json_list(_dtypes "${_json}" dtypes "")
  _inasim_json_list(_data "${_json}" data "")
  _inasim_json_list(_also "${_json}" also_reads "")
  string(APPEND _decls "namespace protocols::${_name} {\nstd::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context);\nvoid ParseWorkload(spec::Reader& workload, Scenario& s);\nstd::vector<const spec::Doc*> WorkloadSections();\nextern const ProtocolChecks kChecks;\n}\n")
  string(APPEND _rows "      {\"${_name}\", \"${_workload_type}\", R\"INASIMP(${_summary})INASIMP\", \"${_section}\", ${_also},\n"
                      "       ${_dtypes}, R\"INASIMP(${_dtype_note})INASIMP\", ${_data}, R\"INASIMP(${_uniform_note})INASIMP\",\n"
                      "       \"${_concurrent_jobs}\", R\"INASIMP(${_jobs_note})INASIMP\", ${_min_hosts_per_job}, \"${_dataplane}\",\n"
                      "       \"${_rel}\", &protocols::${_name}::MakeWorkload, &protocols::${_name}::ParseWorkload,\n       &protocols::${_name}::WorkloadSections, &protocols::${_name}::kChecks, ${_schedule}},\n")
  string(APPEND _texts "    R\"INASIMP(${_json})INASIMP\",\n")
  string(APPEND _all_json "${_json_sep}${_json}")
  set(_json_sep ",\n")
  # Optional: its model describes itself for inasim-p4 check (dataplane/describe.cc, model_bindings.cc).
  string(JSON _model_check ERROR_VARIABLE _mc_err GET "${_json}" model_check)
  if(_mc_err)
    set(_model_check OFF)
  endif()
  if(_model_check)
    if(_dataplane STREQUAL "")
      message(FATAL_ERROR "${_file}: \"model_check\": true needs a \"dataplane\"")
    endif()
    string(APPEND _mc_decls "namespace ${_name} {\ndescribe::ModelDescription Describe();\n"
                            "std::optional<RegisterActionBinding> BindRegisterAction(const std::string& name);\n"
                            "std::optional<TableBinding> BindTable(const std::string& name);\n"
                            "std::optional<PipelineBinding> BindPipeline();\n}\n")
    # The committed manifest, built in (inasim-p4 check needs no source tree).
    set(_manifest ${_dir}/dataplane/upstream-manifest.json)
    if(NOT EXISTS ${_manifest})
      message(FATAL_ERROR "${_file}: \"model_check\": true needs ${_manifest} (inasim-p4 manifest writes it)")
    endif()
    file(READ ${_manifest} _manifest_text)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_manifest})
    string(APPEND _mc_rows "    {\"${_name}\", &${_name}::Describe, &${_name}::BindRegisterAction, &${_name}::BindTable,\n"
                           "     &${_name}::BindPipeline, R\"INASIMMANIFEST(${_manifest_text})INASIMMANIFEST\"},\n")
  endif()
  if(NOT _dataplane STREQUAL "")
    list(APPEND _dp_names ${_name})
    string(APPEND _dp_decls "namespace ${_name} {\nstd::unique_ptr<Dataplane> MakeProgram(const std::string& config_json);\n}\n")
    string(APPEND _dp_rows "    {\"${_dataplane}\", &${_name}::MakeProgram},\n")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_file})
endmacro()

# Writes `path` through configure_file(COPYONLY): untouched (no rebuild) when
# nothing changed.
function(_inasim_write_generated path content)
  file(WRITE ${path}.tmp "${content}")
  configure_file(${path}.tmp ${path} COPYONLY)
endfunction()

function(inasim_protocol_registry)
  cmake_parse_arguments(R "" "PREFIX;JSON" "DIRS" ${ARGN})
  _inasim_protocol_files(_files _where "${R_DIRS}")
  foreach(_v _names _dp_names _host_sources _decls _rows _texts _dp_decls _dp_rows _mc_decls _mc_rows _all_json)
    set(${_v} "")
  endforeach()
  set(_json_sep "\n")
  unset(_default_protocol)
  foreach(_file IN LISTS _files)
    _inasim_add_protocol(${_file})
  endforeach()
  if(NOT DEFINED _default_protocol)
    message(FATAL_ERROR "no ${_where} says \"default\": true (workload.protocol's default)")
  endif()
  set(_generated ${CMAKE_BINARY_DIR}/generated)
  _inasim_write_generated(${_generated}/${R_PREFIX}_protocol_registry.cc
"// Generated by cmake/InasimProtocols.cmake from ${_where}. Do not edit.
#include \"common/spec_fields.h\"\n#include \"ina/protocol-checks.h\"\n#include \"ina/workload.h\"

namespace inasim {

${_decls}
const std::vector<Protocol>& Protocols() {
  static const std::vector<Protocol> kProtocols = {
${_rows}  };
  return kProtocols;
}

std::string_view DefaultProtocol() { return \"${_default_protocol}\"; }

const std::vector<std::string_view>& ProtocolMetadataTexts() {
  static const std::vector<std::string_view> kTexts = {
${_texts}  };
  return kTexts;
}

}  // namespace inasim
")
  _inasim_write_generated(${_generated}/${R_PREFIX}_dataplane_registry.cc
"// Generated by cmake/InasimProtocols.cmake from ${_where}. Do not edit.
#include \"p4model/common/dataplane_registry.h\"
#include \"p4model/common/model_check.h\"

namespace inasim::p4 {

${_dp_decls}
const std::vector<DataplaneProgram>& DataplanePrograms() {
  static const std::vector<DataplaneProgram> kPrograms = {
${_dp_rows}  };
  return kPrograms;
}

${_mc_decls}
const std::vector<ModelCheckedProgram>& ModelCheckedPrograms() {
  static const std::vector<ModelCheckedProgram> kPrograms = {
${_mc_rows}  };
  return kPrograms;
}

}  // namespace inasim::p4
")
  if(R_JSON)
    _inasim_write_generated(${R_JSON} "[${_all_json}\n]\n")
  endif()
  list(SORT _host_sources)
  set(${R_PREFIX}_PROTOCOLS ${_names} PARENT_SCOPE)
  set(${R_PREFIX}_DATAPLANE_PROTOCOLS ${_dp_names} PARENT_SCOPE)
  set(${R_PREFIX}_PROTOCOL_REGISTRY_CC ${_generated}/${R_PREFIX}_protocol_registry.cc PARENT_SCOPE)
  set(${R_PREFIX}_DATAPLANE_REGISTRY_CC ${_generated}/${R_PREFIX}_dataplane_registry.cc PARENT_SCOPE)
  set(${R_PREFIX}_PROTOCOL_HOST_SOURCES ${_host_sources} PARENT_SCOPE)
  message(STATUS "INA-Sim registry ${R_PREFIX}: ${_names} (dataplanes: ${_dp_names})")
endfunction()

# A protocol's dataplane model, <dir>/dataplane/*.cc, as the static library
# inasim_dataplane_<name>. Pure C++: configuring fails if a file there
# includes ns-3 or the simulator (ns3/..., ina/...), so inasim-p4, the unit
# tests and the fuzz targets build without ns-3.
function(inasim_add_dataplane_library name dir)
  file(GLOB _srcs CONFIGURE_DEPENDS ${dir}/dataplane/*.cc)
  file(GLOB _hdrs CONFIGURE_DEPENDS ${dir}/dataplane/*.h)
  if(NOT _srcs)
    message(FATAL_ERROR "${dir}/protocol.json names dataplane \"${name}\" but ${dir}/dataplane has no .cc file")
  endif()
  foreach(_f IN LISTS _srcs _hdrs)
    file(STRINGS ${_f} _bad REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](ns3/|ina/)")
    if(_bad)
      message(FATAL_ERROR "${_f}: a dataplane model is pure C++ (no ns-3, no simulator headers): ${_bad}")
    endif()
  endforeach()
  list(SORT _srcs)
  add_library(inasim_dataplane_${name} STATIC ${_srcs})
  # src/common: the helpers for user input (strict JSON configs; spec::Section,
  # whose compiled part is inasim_spec).
  target_include_directories(inasim_dataplane_${name} PUBLIC ${CMAKE_SOURCE_DIR} PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(inasim_dataplane_${name} PUBLIC inasim_spec PRIVATE nlohmann_json::nlohmann_json fmt::fmt)
  inasim_compile_cold(inasim_dataplane_${name})  # config.cc
endfunction()

# The simulator's registry: every protocols/<name>/.
inasim_protocol_registry(PREFIX INASIM DIRS ${CMAKE_SOURCE_DIR}/protocols JSON ${CMAKE_BINARY_DIR}/protocols.json)
