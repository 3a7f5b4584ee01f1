// inasim-p4 check (p4model/tools): the models against the committed upstream
// manifests (CI, no upstream source needed), the comparator and the register
// action evaluator on snippets, and, when INASIM_P4_SRC names the upstream
// checkouts, the full check with drift detection and differential runs.
#include "protocols/p4sgd/dataplane/describe.h"
#include "protocols/switchml/dataplane/describe.h"
#include "p4model/tools/p4check.h"
#include "p4model/tools/p4eval.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {

using namespace inasim::p4tools;
using nlohmann::json;
using Status = CheckRow::Status;

json Manifest(const std::string& program) {
  std::ifstream in(std::string(INASIM_SOURCE_DIR) + "/protocols/" + program + "/dataplane/upstream-manifest.json");
  EXPECT_TRUE(in) << "no committed manifest for " << program;
  return json::parse(in);
}

std::string Mismatches(const CheckReport& r) {
  std::ostringstream o;
  for (const auto& row : r.rows)
    if (row.status == Status::kMismatch) o << row.kind << " " << row.item << ": " << row.detail << "\n";
  return o.str();
}

TEST(ModelCheck, SwitchmlModelMatchesCommittedManifest) {
  CheckReport r;
  CompareModel(inasim::p4::switchml::Describe(), Manifest("switchml"), r);
  EXPECT_EQ(r.Count(Status::kMismatch), 0) << Mismatches(r);
  // 7 constants, 3 enums, 6 headers, 4 registers, 6 tables and their 32 + 9 + 16 + 4 + 20 const and 56 controller entries.
  EXPECT_EQ(r.Count(Status::kMatch), 7 + 3 + 6 + 4 + 6 + 32 + 9 + 16 + 4 + 20 + 56);
}

TEST(ModelCheck, P4sgdPublicP4ModelMatchesCommittedManifest) {
  CheckReport r;
  CompareModel(inasim::p4::p4sgd::Describe(), Manifest("p4sgd"), r);
  EXPECT_EQ(r.Count(Status::kMismatch), 0) << Mismatches(r);
  // 5 constants (NODE_SIZE, INDEX_SIZE, BITMAP_WIDTH, VALUE_WIDTH, SEQ_SUP), payload_t, 21 registers,
  // bitmap_mapping and its 32 entries.
  EXPECT_EQ(r.Count(Status::kMatch), 5 + 1 + 21 + 1 + 32);
}

TEST(ModelCheck, ComparatorReportsEachKindOfDivergence) {
  const json manifest = Manifest("switchml");
  auto mismatches = [&](const inasim::p4::describe::ModelDescription& d) {
    CheckReport r;
    CompareModel(d, manifest, r);
    return r.Count(Status::kMismatch);
  };
  const auto base = inasim::p4::switchml::Describe();
  ASSERT_EQ(mismatches(base), 0);
  {
    auto d = base;  // a header field one bit wide too many
    d.headers[3].fields[0].width = 5;
    d.headers[3] = inasim::p4::describe::Layout(d.headers[3].name, d.headers[3].fields);
    EXPECT_GT(mismatches(d), 0);
  }
  {
    auto d = base;  // an element that lost its sign (int<8> exponents)
    d.registers[2].element[0].is_signed = false;
    EXPECT_EQ(mismatches(d), 1);
  }
  {
    auto d = base;  // a register of the wrong size
    d.registers[0].size *= 2;
    EXPECT_EQ(mismatches(d), 1);
  }
  {
    auto d = base;  // a const entry with the wrong mask
    d.tables[1].entries[1].keys[0].mask = 3;
    EXPECT_EQ(mismatches(d), 1);
  }
  {
    auto d = base;  // two const entries swapped (priority order)
    std::swap(d.tables[4].entries[0], d.tables[4].entries[4]);
    EXPECT_EQ(mismatches(d), 2);
  }
  {
    auto d = base;  // a controller entry with the wrong port argument
    d.tables[5].entries[6].args = {129};
    EXPECT_EQ(mismatches(d), 1);
  }
  {
    auto d = base;  // a constant and an enum member the model got wrong
    d.constants[0].value = 8192;
    d.enums[0].members[4].second = 5;
    EXPECT_EQ(mismatches(d), 2);
  }
  {
    auto d = base;  // an argument the upstream action does not take, and one too wide for its PortId_t
    d.tables[1].entries[1].args = {1};
    d.tables[5].entries[1].args = {1u << 9};
    EXPECT_EQ(mismatches(d), 2);
  }
  {
    auto d = base;  // a table the model lost
    d.tables.pop_back();
    EXPECT_EQ(mismatches(d), 1);
  }
}

TEST(ModelCheck, HeaderProbeReadsLayoutsOffTheParser) {
  using inasim::p4::describe::ProbeLayout;
  // A 16-bit header: a (4 bits), b (4 bits, but read LSB first: a parser bug), pad (unparsed), c (4 bits).
  auto parse = [](size_t bit) {
    uint16_t h = 0;
    if (bit != SIZE_MAX) h = static_cast<uint16_t>(0x8000 >> bit);
    uint64_t b = 0;
    for (int i = 0; i < 4; ++i) b |= uint64_t((h >> (8 + i)) & 1) << (3 - i);
    return std::vector<uint64_t>{uint64_t(h >> 12), b, uint64_t(h & 0xf)};
  };
  const auto d = ProbeLayout("h", {{"a"}, {"b"}, {"pad", false, false}, {"c"}}, 16, parse);
  ASSERT_EQ(d.fields.size(), 4u);
  EXPECT_EQ(d.fields[0].width, 4);
  EXPECT_EQ(d.fields[0].offset, 0);
  EXPECT_EQ(d.fields[1].width, -1) << "bits in the wrong order are reported";
  EXPECT_EQ(d.fields[3].offset, 12);
  EXPECT_EQ(d.fields[3].width, 4);
  // The same header read right: pad is the gap between b and c.
  auto good = [](size_t bit) {
    const uint16_t h = bit == SIZE_MAX ? 0 : static_cast<uint16_t>(0x8000 >> bit);
    return std::vector<uint64_t>{uint64_t(h >> 12), uint64_t((h >> 8) & 0xf), uint64_t(h & 0xf)};
  };
  const auto ok = ProbeLayout("h", {{"a"}, {"b"}, {"pad", false, false}, {"c"}}, 16, good);
  EXPECT_EQ(ok.fields[1].width, 4);
  EXPECT_EQ(ok.fields[2].offset, 8);
  EXPECT_EQ(ok.fields[2].width, 4);
}

TEST(ModelCheck, DamagedManifestIsAnErrorNotACrash) {
  json m = Manifest("switchml");
  m["headers"]["switchml_h"]["fields"][2].erase("width");
  CheckReport r;
  EXPECT_THROW(CompareModel(inasim::p4::switchml::Describe(), m, r), json::exception);
  json no_tables = Manifest("p4sgd");
  no_tables.erase("tables");
  EXPECT_THROW(CompareModel(inasim::p4::p4sgd::Describe(), no_tables, r), std::invalid_argument);
  // The CLI turns both into a message and exit status 2.
  const auto path = std::filesystem::temp_directory_path() / "inasim_damaged_manifest.json";
  std::ofstream(path) << m.dump();
  EXPECT_EQ(CheckCommand({"check", "switchml", "--manifest", path.string()}), 2);
  std::ofstream(path) << "{ not json";
  EXPECT_EQ(CheckCommand({"check", "switchml", "--manifest", path.string()}), 2);
  EXPECT_EQ(CheckCommand({"check", "switchml", "--p4-src", "/nonexistent/p4src"}), 2);
  EXPECT_EQ(CheckCommand({"check", "nosuchprogram"}), 2);
  EXPECT_EQ(CheckCommand({"check", "switchml", "--inputs", "many"}), 2);
  std::filesystem::remove(path);
}

TEST(ModelCheck, DriftIsReported) {
  const json committed = Manifest("p4sgd");
  json fresh = committed;
  CheckReport same;
  CompareDrift(committed, fresh, same);
  EXPECT_EQ(same.Count(Status::kMismatch), 0);
  fresh["registers"]["Ingress.seq_reg"]["size"] = 512;
  fresh["tables"]["Ingress.new_table"] = json::object();
  CheckReport drift;
  CompareDrift(committed, fresh, drift);
  EXPECT_EQ(drift.Count(Status::kMismatch), 2);
}

/// The one RegisterAction of a snippet, compiled.
struct Snippet {
  explicit Snippet(const std::string& text) : prog(p4src::Parse(p4src::PreprocessText(text, "snippet.p4"))) {}
  RegisterActionEval Action(const std::string& name) const {
    const p4src::Control& c = prog.controls.at(0);
    return RegisterActionEval(prog, c, *c.FindRegisterAction(name));
  }
  p4src::Program prog;
};

TEST(ModelCheck, EvaluatorWidthsSignednessAndWraparound) {
  const Snippet s(R"(
typedef int<8> e_t;
struct pair_t { e_t first; e_t second; }
struct md_t { bit<32> v; bit<8> n; }
control C(in e_t x, inout md_t md) {
    Register<pair_t, bit<4>>(16) ep;
    RegisterAction<pair_t, bit<4>, e_t>(ep) smax = {
        void apply(inout pair_t value, out e_t r) {
            value.first = max(value.first, x);
            value.second = min(value.second, x);
            r = value.first;
        }
    };
    Register<bit<32>, bit<4>>(16) u;
    RegisterAction<bit<32>, bit<4>, bit<32>>(u) wrap = {
        void apply(inout bit<32> d, out bit<32> r) {
            bit<32> old = d;
            d = d + md.v;
            if (d < old || md.n == 8w0xff) { r = 1; } else { r = (bit<32>) md.n[3:0]; }
        }
    };
    RegisterAction<bit<32>, bit<4>, bit<32>>(u) sat = {
        void apply(inout bit<32> d, out bit<32> r) {
            d = d |+| md.v;
            r = ~d;
        }
    };
}
)");
  const RegisterActionEval smax = s.Action("smax");
  ASSERT_EQ(smax.inputs().size(), 1u);
  EXPECT_EQ(smax.inputs()[0].name, "x");
  uint64_t cell[2] = {0x80, 0x7f};  // -128, 127
  uint64_t in[2] = {0x05};          // 5
  EXPECT_EQ(smax.Run(cell, in), 5u) << "int<8> max is signed: max(-128, 5) = 5";
  EXPECT_EQ(cell[1], 5u);
  cell[0] = 0xff;  // -1
  in[0] = 0xfe;    // -2
  EXPECT_EQ(smax.Run(cell, in), 0xffu);

  const RegisterActionEval wrap = s.Action("wrap");
  ASSERT_EQ(wrap.inputs().size(), 2u);
  uint64_t d[1] = {0xffffffff};
  uint64_t vn[2] = {2, 0x3c};  // md.v, md.n (in order of first read)
  EXPECT_EQ(wrap.Run(d, vn), 1u) << "bit<32> addition wraps";
  EXPECT_EQ(d[0], 1u);
  vn[0] = 1;
  EXPECT_EQ(wrap.Run(d, vn), 0xcu) << "slice [3:0] of 0x3c";

  const RegisterActionEval sat = s.Action("sat");
  uint64_t c[1] = {0xfffffff0};
  uint64_t v[1] = {0x100};
  EXPECT_EQ(sat.Run(c, v), 0u) << "|+| saturates at all ones";
  EXPECT_EQ(c[0], 0xffffffffu);
}

TEST(ModelCheck, ControllerEntriesParsedFromPython) {
  const auto dir = std::filesystem::temp_directory_path() / "inasim_model_check_py";
  std::filesystem::create_directories(dir / "dev_root/controller");
  std::ofstream(dir / "dev_root/controller/common.py") << "class PacketSize(IntEnum):\n    MTU_128 = 0\n    MTU_1024 = 3\n\n"
                                                          "class PacketType(IntEnum):\n    CONSUME0 = 0x4\n";
  std::ofstream(dir / "dev_root/controller/next_step_selector.py")
      << "class Flag(IntEnum):\n    FIRST = 0\n    LAST = 1\n\nclass X:\n"
         "    def add_default_entries(self):\n"
         "        port = {1: 452, 7: 68}\n"
         "        entries = [\n"
         "            ( PacketSize.MTU_128, None, None, None, None, 1, 'drop', None),\n"
         "            ( None, None, PacketType.CONSUME0, Flag.LAST, 0, 0, 'recirculate_for_HARVEST7', port[7])]\n"
         "        entries.extend([\n"
         "            (PacketSize.MTU_1024, i, PacketType.CONSUME0, None, 0, 2, 'recirculate_for_CONSUME1', (1 << 7) + i * 4)\n"
         "            for i in range(3)])\n"
         "    def add_entry(self):\n"
         "        ( PacketSize.MTU_128, None, None, None, None, 9, 'ignored', None)\n";
  const auto& described = inasim::p4::switchml::Describe().controller_entries;
  ASSERT_EQ(described.size(), 1u);
  const json e = ReadControllerEntries(dir.string(), described[0]);
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0]["action"], "recirculate_for_HARVEST7") << "sorted by priority";
  EXPECT_EQ(e[0]["args"], json::array({68}));
  EXPECT_EQ(e[0]["keys"][3], json::array({1, 0xff}));
  EXPECT_EQ(e[1]["keys"][0], json::array({0, 7}));
  EXPECT_EQ(e[1]["keys"][1], json::array({0, 0}));
  EXPECT_EQ(e[4]["args"], json::array({128 + 2 * 4}));
  EXPECT_EQ(e[4]["keys"][1], json::array({2, 0xffff}));
  EXPECT_EQ(e[4]["loc"], "dev_root/controller/next_step_selector.py:12");
  std::filesystem::remove_all(dir);
}

/// INASIM_P4_SRC=DIR with DIR/switchml a p4lang/p4app-switchML checkout and
/// DIR/p4sgd an RC4ML/P4FPGA checkout, at the cited commits (p4model/tools/README.md).
void RunUpstreamCheck(const std::string& program) {
  const char* src = std::getenv("INASIM_P4_SRC");
  if (!src || !*src)
    GTEST_SKIP() << "INASIM_P4_SRC is not set: skipping the check against the upstream P4 source "
                    "(see p4model/tools/README.md for how to fetch it)";
  const std::string dir = std::string(src) + "/" + program;
  ASSERT_TRUE(std::filesystem::exists(dir)) << dir << " does not exist";
  // Fewer inputs than the CLI's default 1e6 per action: CI time.
  EXPECT_EQ(CheckCommand({"check", program, "--p4-src", dir, "--inputs", "100000"}), 0);
}

TEST(ModelCheck, UpstreamSwitchmlNoMismatchNoDriftNoDifferentialFailure) { RunUpstreamCheck("switchml"); }
TEST(ModelCheck, UpstreamP4sgdNoMismatchNoDriftNoDifferentialFailure) { RunUpstreamCheck("p4sgd"); }

}  // namespace
