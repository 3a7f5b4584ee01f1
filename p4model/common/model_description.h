// A model's description of itself, in the terms of the P4 program it mirrors:
// header layouts, registers, tables with their entries. Each protocol folder
// builds one from its own constants and tables (switchml/describe.cc,
// p4sgd/describe.cc), so that inasim-p4 check can compare it with what the P4
// reader extracts from the upstream source (p4model/tools/README.md).
#pragma once

#include <cstdint>
#include <utility>
#include <string>
#include <vector>

namespace inasim::p4::describe {

struct FieldDesc {
  FieldDesc(std::string n = "", int w = 0, int off = 0, bool s = false)
      : name(std::move(n)), width(w), offset(off), is_signed(s) {}
  std::string name;
  int width = 0;   ///< bits
  int offset = 0;  ///< bits from the start of the header, MSB first
  bool is_signed = false;
};

struct HeaderDesc {
  HeaderDesc(std::string n = "", std::vector<FieldDesc> f = {}) : name(std::move(n)), fields(std::move(f)) {}
  std::string name;  ///< the P4 header type, e.g. "switchml_h"
  std::vector<FieldDesc> fields;
};

/// Register<element, index>(size): the element's fields ("first"/"second" of a
/// pair struct, or one unnamed field for a scalar).
struct RegisterDesc {
  RegisterDesc(std::string c = "", std::string n = "", std::vector<FieldDesc> e = {}, uint64_t sz = 0)
      : control(std::move(c)), name(std::move(n)), element(std::move(e)), size(sz) {}
  std::string control, name;
  std::vector<FieldDesc> element;  ///< offsets unused
  uint64_t size = 0;
};

struct KeyDesc {
  KeyDesc(std::string f = "", std::string m = "", int w = 0) : field(std::move(f)), match(std::move(m)), width(w) {}
  std::string field;  ///< P4 path, e.g. "ig_md.switchml_md.packet_type"
  std::string match;  ///< "exact", "ternary", ...
  int width = 0;
};

struct KeyValue {
  KeyValue(uint64_t v = 0, uint64_t m = 0) : value(v), mask(m) {}
  uint64_t value = 0;
  uint64_t mask = 0;  ///< 0 for a don't-care
};

struct EntryDesc {
  EntryDesc(std::vector<KeyValue> k = {}, std::string a = "", std::vector<uint64_t> ar = {}, int prio = -1)
      : keys(std::move(k)), action(std::move(a)), args(std::move(ar)), priority(prio) {}
  std::vector<KeyValue> keys;
  std::string action;
  std::vector<uint64_t> args;
  int priority = -1;  ///< controller entries: the priority they are installed with; const entries: -1 (list order)
};

struct TableDesc {
  TableDesc(std::string c = "", std::string n = "", std::vector<KeyDesc> k = {}, std::vector<std::string> a = {},
            std::string def = "")
      : control(std::move(c)), name(std::move(n)), keys(std::move(k)), actions(std::move(a)),
        default_action(std::move(def)) {}
  std::string control, name;
  std::vector<KeyDesc> keys;
  std::vector<std::string> actions;
  std::string default_action;
  std::vector<uint64_t> default_args;
  bool controller_entries = false;  ///< entries installed by the controller, not `const entries`
  std::vector<EntryDesc> entries;
};

struct ModelDescription {
  std::string program;   ///< "switchml", "p4sgd"
  std::string upstream;  ///< owner/repo@commit
  std::string main_file;  ///< the program's top-level file, relative to the upstream checkout (--p4-src)
  std::vector<std::string> controls;  ///< upstream controls the model covers (others are "not modeled")
  std::vector<HeaderDesc> headers;
  std::vector<RegisterDesc> registers;
  std::vector<TableDesc> tables;
};

/// Fills offsets from widths in declaration order.
inline HeaderDesc Layout(std::string name, std::vector<FieldDesc> fields) {
  int at = 0;
  for (FieldDesc& f : fields) {
    f.offset = at;
    at += f.width;
  }
  return HeaderDesc{std::move(name), std::move(fields)};
}

}  // namespace inasim::p4::describe
