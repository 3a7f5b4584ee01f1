# The protocol registry, generated at configure time from every
# protocols/<name>/protocol.json (the only list of protocols; adding a folder
# adds a protocol). Static initialisers in static libraries would be dropped
# by the linker; a generated table that names each protocol's factory cannot be.
#
# Sets, for the rest of the build:
#   INASIM_PROTOCOLS            every protocol name, sorted
#   INASIM_DATAPLANE_PROTOCOLS  those with a dataplane model (inasim-p4 programs)
#   INASIM_PROTOCOL_REGISTRY_CC the generated ns-3-side registry (workload factories)
#   INASIM_DATAPLANE_REGISTRY_CC the generated pure C++ registry (dataplane factories,
#                               and the programs inasim-p4 check compares with upstream P4:
#                               "model_check": true, p4model/common/model_check.h)
# and writes ${CMAKE_BINARY_DIR}/protocols.json (the registry as data, for scripts).

file(GLOB _inasim_protocol_files CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/protocols/*/protocol.json)
list(SORT _inasim_protocol_files)

set(INASIM_PROTOCOLS "")
set(INASIM_DATAPLANE_PROTOCOLS "")
set(_decls "")
set(_rows "")
set(_texts "")
set(_dp_decls "")
set(_dp_rows "")
set(_mc_decls "")
set(_mc_rows "")
set(_all_json "[")

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

foreach(_file IN LISTS _inasim_protocol_files)
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
  list(APPEND INASIM_PROTOCOLS ${_name})
  if(_default)
    if(DEFINED _default_protocol)
      message(FATAL_ERROR "${_file}: \"default\": true, but ${_default_protocol} is the default already")
    endif()
    if(NOT _workload_type STREQUAL "allreduce")
      message(FATAL_ERROR "${_file}: the default protocol must be an allreduce")
    endif()
    set(_default_protocol ${_name})
  endif()
  _inasim_json_list(_dtypes "${_json}" dtypes "")
  _inasim_json_list(_data "${_json}" data "")
  _inasim_json_list(_also "${_json}" also_reads "")
  string(APPEND _decls "namespace protocols::${_name} {\nstd::unique_ptr<Workload> MakeWorkload(const WorkloadContext& context);\nvoid ParseWorkload(spec::Reader& workload, Scenario& s);\nextern const ProtocolChecks kChecks;\n}\n")
  string(APPEND _rows "      {\"${_name}\", \"${_workload_type}\", R\"INASIMP(${_summary})INASIMP\", \"${_section}\", ${_also},\n"
                      "       ${_dtypes}, R\"INASIMP(${_dtype_note})INASIMP\", ${_data}, R\"INASIMP(${_uniform_note})INASIMP\",\n"
                      "       \"${_concurrent_jobs}\", R\"INASIMP(${_jobs_note})INASIMP\", ${_min_hosts_per_job}, \"${_dataplane}\",\n"
                      "       \"protocols/${_name}\", &protocols::${_name}::MakeWorkload, &protocols::${_name}::ParseWorkload,\n       &protocols::${_name}::kChecks},\n")
  if(_json MATCHES "\\)INASIMP\"")
    message(FATAL_ERROR "${_file} contains the raw-string delimiter )INASIMP\"")
  endif()
  string(APPEND _texts "    R\"INASIMP(${_json})INASIMP\",\n")
  if(_all_json STREQUAL "[")
    string(APPEND _all_json "\n${_json}")
  else()
    string(APPEND _all_json ",\n${_json}")
  endif()
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
                            "std::optional<TableBinding> BindTable(const std::string& name);\n}\n")
    string(APPEND _mc_rows "    {\"${_name}\", &${_name}::Describe, &${_name}::BindRegisterAction, &${_name}::BindTable},\n")
  endif()
  if(NOT _dataplane STREQUAL "")
    list(APPEND INASIM_DATAPLANE_PROTOCOLS ${_name})
    string(APPEND _dp_decls "namespace ${_name} {\nstd::unique_ptr<Dataplane> MakeProgram(const std::string& config_json);\n}\n")
    string(APPEND _dp_rows "    {\"${_dataplane}\", &${_name}::MakeProgram},\n")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_file})
endforeach()
string(APPEND _all_json "\n]\n")
if(NOT DEFINED _default_protocol)
  message(FATAL_ERROR "no protocols/*/protocol.json says \"default\": true (workload.protocol's default)")
endif()

set(INASIM_PROTOCOL_REGISTRY_CC ${CMAKE_BINARY_DIR}/generated/protocol_registry.cc)
set(INASIM_DATAPLANE_REGISTRY_CC ${CMAKE_BINARY_DIR}/generated/dataplane_registry.cc)
# Written through configure_file(COPYONLY): untouched (no rebuild) when nothing changed.
file(WRITE ${INASIM_PROTOCOL_REGISTRY_CC}.tmp
"// Generated by cmake/InasimProtocols.cmake from protocols/*/protocol.json. Do not edit.
#include \"ina/protocol-checks.h\"\n#include \"ina/workload.h\"

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
configure_file(${INASIM_PROTOCOL_REGISTRY_CC}.tmp ${INASIM_PROTOCOL_REGISTRY_CC} COPYONLY)

file(WRITE ${INASIM_DATAPLANE_REGISTRY_CC}.tmp
"// Generated by cmake/InasimProtocols.cmake from protocols/*/protocol.json. Do not edit.
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
configure_file(${INASIM_DATAPLANE_REGISTRY_CC}.tmp ${INASIM_DATAPLANE_REGISTRY_CC} COPYONLY)

file(WRITE ${CMAKE_BINARY_DIR}/protocols.json.tmp "${_all_json}")
configure_file(${CMAKE_BINARY_DIR}/protocols.json.tmp ${CMAKE_BINARY_DIR}/protocols.json COPYONLY)
message(STATUS "INA-Sim protocols: ${INASIM_PROTOCOLS} (dataplanes: ${INASIM_DATAPLANE_PROTOCOLS})")

# Each protocol's host side (protocols/<name>/host/*.cc: its agents, report
# and registry entry), compiled into the simulator library.
file(GLOB INASIM_PROTOCOL_HOST_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/protocols/*/host/*.cc)
list(SORT INASIM_PROTOCOL_HOST_SOURCES)
