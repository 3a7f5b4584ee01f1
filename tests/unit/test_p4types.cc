// p4model/tools/p4types: P4_16's width rules on snippets written for the test,
// each rule once broken (the violation named with its line) and once kept.
#include "p4model/tools/p4types.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace {

using namespace inasim::p4tools;
using namespace inasim::p4tools::p4src;

/// The violations of a control whose apply block is `body`, over a program
/// with a header, a serializable enum, a register and a sub-control.
std::vector<std::string> Check(const std::string& body, const std::string& actions = "") {
  const std::string text = R"(
typedef bit<15> idx_t;
enum bit<4> kind_t { A = 1, B = 2 }
header h_t { bit<16> len; bit<8> ttl; kind_t kind; idx_t idx; }
struct md_t { bit<9> port; bool flag; bit<32> word; }
struct hdr_t { h_t h; }
control Sub(in bit<16> a, inout bit<8> b) { apply { b = b + 1; } }
control C(inout hdr_t hdr, inout md_t md) {
    Sub() sub;
    Register<bit<32>, idx_t>(1024) reg;
    RegisterAction<bit<32>, idx_t, bit<32>>(reg) bump = {
        void apply(inout bit<32> v, out bit<32> r) { v = v + 1; r = v; }
    };
    action set_ttl(bit<8> t) { hdr.h.ttl = t; }
)" + actions + R"(
    apply {
)" + body + R"(
    }
}
)";
  return WidthViolations(Parse(PreprocessText(text, "snippet.p4")));
}

/// The line of `snippet.p4` the apply body's first line has.
constexpr int kBodyLine = 17;

TEST(P4Types, AnUpstreamStyleBlockHasNoViolations) {
  const auto v = Check(R"(
        hdr.h.len = hdr.h.len + 16;                 // an untyped int takes the other side's type
        hdr.h.ttl = (bit<8>) hdr.h.len;             // an explicit cast
        md.word = hdr.h.len ++ hdr.h.len;           // ++: 16 + 16 bits
        md.word = md.word << 3;                     // a shift keeps its left operand's type
        md.flag = hdr.h.kind == kind_t.A && true;   // a serializable enum compares with its own type
        bit<4> k = kind_t.B;                        // ... and converts to its underlying type
        md.word = bump.execute(hdr.h.idx);          // execute's index is the register's index type
        sub.apply(hdr.h.len, hdr.h.ttl);
        set_ttl(hdr.h.ttl);
        md.port = (bit<9>) hdr.h.idx[8:0];
        hdr.h.len[15:15] = 1w0;
        md.word = max(md.word, 32w7);
)");
  EXPECT_TRUE(v.empty()) << (v.empty() ? "" : v[0]);
}

TEST(P4Types, EachRuleBrokenIsNamedWithItsLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"hdr.h.idx = hdr.h.len;", "assignment: bit<16> where bit<15> is needed"},
      {"hdr.h.len[14:0] = hdr.h.ttl ++ hdr.h.ttl;", "assignment: bit<16> where bit<15> is needed"},
      {"md.word = md.word + hdr.h.len;", "operands of +: bit<16> where bit<32> is needed"},
      {"md.flag = hdr.h.len == hdr.h.ttl;", "operands of ==: bit<8> where bit<16> is needed"},
      {"md.port = hdr.h.ttl[8:0];", "slice [8:0] of a bit<8> value"},
      {"md.port = hdr.h.len[0:1];", "slice [0:1] has hi < lo"},
      {"md.flag = 1w1;", "assignment: bit<1> where bool is needed"},
      {"md.word = bump.execute(hdr.h.len);", "index of bump.execute: bit<16> where bit<15> is needed"},
      {"sub.apply(hdr.h.ttl, hdr.h.ttl);", "argument a of sub.apply: bit<8> where bit<16> is needed"},
      {"set_ttl(hdr.h.len);", "argument t of action set_ttl: bit<16> where bit<8> is needed"},
      {"bit<8> x = hdr.h.len;", "initialiser of x: bit<16> where bit<8> is needed"},
      {"md.word = md.flag ? hdr.h.len : md.word;", "branches of ?:: bit<32> where bit<16> is needed"},
      {"md.port = hdr.h.kind;", "assignment: bit<4> where bit<9> is needed"},
  };
  for (const auto& [stmt, want] : cases) {
    const auto v = Check("        " + stmt);
    ASSERT_EQ(v.size(), 1u) << stmt;
    EXPECT_EQ(v[0].rfind("snippet.p4:" + std::to_string(kBodyLine) + ": ", 0), 0u) << v[0];
    EXPECT_NE(v[0].find(want), std::string::npos) << stmt << " -> " << v[0];
  }
}

TEST(P4Types, ActionAndRegisterActionBodiesAreCheckedToo) {
  auto v = Check("", "    action bad() { hdr.h.ttl = hdr.h.len; }\n");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].find("assignment: bit<16> where bit<8> is needed"), std::string::npos) << v[0];
  v = Check("", R"(
    Register<bit<16>, idx_t>(8) reg16;
    RegisterAction<bit<32>, idx_t, bit<32>>(reg16) wide = {
        void apply(inout bit<32> v, out bit<32> r) { r = v[32:1]; }
    };
)");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_NE(v[0].find("RegisterAction wide's element type vs its Register's: bit<16> where bit<32>"), std::string::npos) << v[0];
  EXPECT_NE(v[1].find("slice [32:1] of a bit<32> value"), std::string::npos) << v[1];
}

TEST(P4Types, ReadProgramRefusesInvalidP4AsSuch) {
  const auto dir = std::filesystem::temp_directory_path() / "inasim_p4types";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ok.p4") << "header h_t { bit<8> a; bit<16> b; }\nstruct s_t { h_t h; }\n"
                                  "control C(inout s_t s) { apply { s.h.b = s.h.b + 1; } }\n";
  std::ofstream(dir / "width.p4") << "header h_t { bit<8> a; bit<16> b; }\nstruct s_t { h_t h; }\n"
                                     "control C(inout s_t s) { apply { s.h.b = s.h.a; } }\n";
  std::ofstream(dir / "actions.p4") << "control C() {\n action a() { }\n table t {\n  actions = { a; ; }\n }\n apply { }\n}\n";
  EXPECT_NO_THROW(ReadProgram(dir.string(), "ok.p4"));
  try {
    ReadProgram(dir.string(), "width.p4");
    FAIL() << "expected InvalidP4";
  } catch (const InvalidP4& e) {
    EXPECT_NE(std::string(e.what()).find("not valid P4: width.p4:3: assignment: bit<8> where bit<16>"), std::string::npos)
        << e.what();
  }
  try {
    ReadProgram(dir.string(), "actions.p4");
    FAIL() << "expected InvalidP4";
  } catch (const InvalidP4& e) {
    EXPECT_NE(std::string(e.what()).find("actions.p4:4: an actions list entry must name an action"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
