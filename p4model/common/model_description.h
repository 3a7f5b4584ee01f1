// A model's description of itself, in the terms of the P4 program it mirrors:
// header layouts, registers, tables with their entries. Each protocol folder
// builds one from its own constants and tables (its dataplane/describe.cc), so
// that inasim-p4 check can compare it with what the P4 reader extracts from
// the upstream source (p4model/tools/README.md, p4model/common/model_check.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
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

/// A program constant the model hard-codes: a P4 `const`, or an object-like
/// `#define` (`define_flag`: only whether it is defined matters, e.g. SEQ_SUP).
struct ConstantDesc {
  ConstantDesc(std::string n = "", uint64_t v = 0, bool flag = false) : name(std::move(n)), value(v), define_flag(flag) {}
  std::string name;
  uint64_t value = 0;
  bool define_flag = false;
};

/// A P4 `enum bit<N>` the model mirrors as a C++ enum.
struct EnumDesc {
  EnumDesc(std::string n = "", int w = 0, std::vector<std::pair<std::string, uint64_t>> m = {})
      : name(std::move(n)), width(w), members(std::move(m)) {}
  std::string name;
  int width = 0;
  std::vector<std::pair<std::string, uint64_t>> members;
};

/// Where the entries of a table that the controller's Python installs
/// (TableDesc::controller_entries) are read upstream (`inasim-p4 manifest`):
/// `function` lists tuples (key fields..., priority, 'action', arguments...),
/// None for a don't-care key or an absent argument; the IntEnums of the file
/// and of `enum_files`, `name = {k: v, ...}` dicts and `for i in range(N)`
/// comprehensions in it are evaluated.
struct ControllerEntriesDesc {
  std::string table;                    ///< "Control.table"
  std::string file;                     ///< the Python file, from the checkout's root
  std::vector<std::string> enum_files;  ///< other files whose IntEnums it uses
  std::string function;                 ///< the method listing the tuples
  std::vector<uint64_t> key_masks;      ///< per key field, the mask its value is installed with
};

struct ModelDescription {
  std::string program;   ///< the protocol's name (inasim-p4 check PROGRAM)
  std::string upstream;  ///< owner/repo@commit
  std::string main_file;  ///< the program's top-level file, relative to the upstream checkout (--p4-src)
  std::vector<std::string> controls;  ///< upstream controls the model covers (others are "not modeled")
  std::vector<ConstantDesc> constants;
  std::vector<EnumDesc> enums;
  std::vector<HeaderDesc> headers;
  std::vector<RegisterDesc> registers;
  std::vector<TableDesc> tables;
  std::vector<ControllerEntriesDesc> controller_entries;
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

/// A header field as the probe sees it: its name, whether the model's C++ type
/// is signed, and whether the model's parser reads it at all (padding it skips
/// is not read; its width is the gap the parsed fields leave).
struct ProbeField {
  ProbeField(std::string n, bool s = false, bool p = true) : name(std::move(n)), is_signed(s), parsed(p) {}
  std::string name;
  bool is_signed = false;
  bool parsed = true;
};

/// Derives a header's layout from the model's own parser. `parse(bit)` parses
/// the model's base frame with header bit `bit` (MSB first from the header's
/// first byte) flipped, or unflipped for bit == SIZE_MAX, and returns the
/// parsed values of the `parsed` fields, in order. A field's width is the
/// number of bits whose flip changes it and only it, its offset the first of
/// them; a field whose bits are not one MSB-first run gets width -1, so the
/// check reports it.
inline HeaderDesc ProbeLayout(std::string name, const std::vector<ProbeField>& fields, size_t header_bits,
                              const std::function<std::vector<uint64_t>(size_t bit)>& parse) {
  const std::vector<uint64_t> base = parse(SIZE_MAX);
  struct Owner {
    int field = -1;  ///< index into the parsed values; -1 none, -2 several
    int bit = 0;     ///< which bit of the field's value it flipped
  };
  std::vector<Owner> owner(header_bits);
  for (size_t b = 0; b < header_bits; ++b) {
    const std::vector<uint64_t> v = parse(b);
    for (size_t i = 0; i < v.size() && i < base.size(); ++i) {
      const uint64_t x = v[i] ^ base[i];
      if (x == 0) continue;
      const bool one_bit = (x & (x - 1)) == 0;
      if (owner[b].field != -1 || !one_bit) {
        owner[b].field = -2;
        continue;
      }
      owner[b].field = static_cast<int>(i);
      int k = 0;
      while ((x >> k) != 1) ++k;
      owner[b].bit = k;
    }
  }
  HeaderDesc h{std::move(name), {}};
  int parsed_index = 0;
  for (const ProbeField& pf : fields) h.fields.push_back(FieldDesc(pf.name, 0, 0, pf.is_signed));
  // Parsed fields first, from the bits that own them.
  for (size_t f = 0; f < fields.size(); ++f) {
    if (!fields[f].parsed) continue;
    int first = -1, count = 0;
    for (size_t b = 0; b < header_bits; ++b)
      if (owner[b].field == parsed_index) {
        if (first < 0) first = static_cast<int>(b);
        ++count;
      }
    bool msb_first_run = first >= 0;
    for (int j = 0; msb_first_run && j < count; ++j)
      msb_first_run = owner[first + j].field == parsed_index && owner[first + j].bit == count - 1 - j;
    h.fields[f].offset = first < 0 ? 0 : first;
    h.fields[f].width = msb_first_run ? count : -1;
    ++parsed_index;
  }
  // Unparsed fields fill the gap between their neighbours.
  for (size_t f = 0; f < fields.size(); ++f) {
    if (fields[f].parsed) continue;
    const int start = f == 0 ? 0 : h.fields[f - 1].offset + h.fields[f - 1].width;
    const int end = f + 1 < fields.size() ? h.fields[f + 1].offset : static_cast<int>(header_bits);
    h.fields[f].offset = start;
    h.fields[f].width = end - start;
  }
  return h;
}

}  // namespace inasim::p4::describe
