// Self-test of p4model/tools/p4reader on small P4 snippets written for the test
// (no upstream source needed).
#include "p4model/tools/p4reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace {

using namespace inasim::p4tools::p4src;

Program Read(const std::string& text) { return Parse(PreprocessText(text, "snippet.p4")); }

TEST(P4Reader, PreprocessorObjectAndFunctionMacrosWithPasting) {
  const Program p = Read(R"(
#include <arch_externs.p4>
#define W 16
#define FLAG
#ifndef FLAG
const bit<8> SKIPPED = 1;
#else
const bit<8> KEPT = 2;
#endif
#define REG(s, i) \
    Register<bit<W>, bit<8>>(256) reg_##s####i##_x; \
    RegisterAction<bit<W>, bit<8>, bit<W>>(reg_##s####i##_x) add_##s####i = { \
        void apply(inout bit<W> d, out bit<W> r) { d = d + hdr.v##i##; r = d; } \
    }
control C(inout hdr_t hdr) {
    REG(0, 1);
    REG(1, 2);
    apply { }
}
)");
  EXPECT_EQ(p.consts.count("SKIPPED"), 0u);
  ASSERT_EQ(p.consts.count("KEPT"), 1u);
  EXPECT_EQ(p.consts.at("KEPT"), 2u);
  const Control* c = p.FindControl("C");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->registers.size(), 2u);
  EXPECT_EQ(c->registers[0].name, "reg_01_x");
  EXPECT_EQ(c->registers[1].name, "reg_12_x");
  EXPECT_EQ(c->registers[0].element.width, 16);
  EXPECT_EQ(c->registers[0].size, 256u);
  const RegisterActionDecl* a = c->FindRegisterAction("add_12");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->register_name, "reg_12_x");
  ASSERT_EQ(a->body.size(), 2u);
  EXPECT_EQ(a->body[0]->rhs->args[1]->name, "hdr.v2");
}

TEST(P4Reader, DeclarationsWidthsAndConstants) {
  const Program p = Read(R"(
const int size = 1024;
const int half = size / 2;
typedef bit<15> idx_t;
typedef int<8> exp_t;
typedef bit<(half - 500)> odd_t;
enum bit<4> kind_t { A = 0x1, B, C = 8w3 }
@flexible header h_t {
    bit<4> a;
    exp_t e;
    kind_t k;
    bool f;
    PortId_t port;
}
struct pair_t { exp_t first; exp_t second; }
)");
  EXPECT_EQ(p.consts.at("half"), 512u);
  EXPECT_EQ(p.WidthOf(TypeRef{TypeRef::Kind::kNamed, 0, "odd_t"}), 12);
  EXPECT_TRUE(p.IsSigned(TypeRef{TypeRef::Kind::kNamed, 0, "exp_t"}));
  EXPECT_FALSE(p.IsSigned(TypeRef{TypeRef::Kind::kNamed, 0, "idx_t"}));
  const Enum& k = p.enums.at("kind_t");
  ASSERT_EQ(k.members.size(), 3u);
  EXPECT_EQ(k.members[1].second, 2u);
  EXPECT_EQ(k.members[2].second, 3u);
  const Composite& h = p.composites.at("h_t");
  EXPECT_TRUE(h.is_header);
  ASSERT_EQ(h.fields.size(), 5u);
  int bits = 0;
  for (const Field& f : h.fields) bits += p.WidthOf(f.type);
  EXPECT_EQ(bits, 4 + 8 + 4 + 1 + 9);
  EXPECT_FALSE(p.composites.at("pair_t").is_header);
}

TEST(P4Reader, TablesWithConstEntriesAndRegisterActionBodies) {
  const Program p = Read(R"(
enum bit<4> t_t { X = 4, Y = 5 }
control K(inout md_t md) {
    bit<32> bitmap;
    Register<pair_t, bit<15>>(16384) regs;
    RegisterAction<pair_t, bit<15>, bit<8>>(regs) ra = {
        void apply(inout pair_t value, out bit<8> rv) {
            rv = value.first;
            if (value.first == 0) {
                value.first = md.n - 1;
            } else if (value.first > 8w3 && !(bitmap == 0)) {
                value.first = max(value.first, (bit<8>) bitmap[7:0]);
            } else {
                value.first = value.first |+| 1;
            }
        }
    };
    action a1(bit<32> m) { md.x = m; }
    action a2() { }
    table t {
        key = { md.idx : ternary; md.kind : ternary; md.p : exact; }
        actions = { a1; @defaultonly a2; }
        const entries = {
            (15w0 &&& 15w1, t_t.X, 3) : a1(1 << 3);
            (_, t_t.Y, 0x10) : a2();
        }
        const default_action = a2;
        size = 4;
    }
    apply { t.apply(); }
}
)");
  const Control* c = p.FindControl("K");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->locals.size(), 1u);
  EXPECT_EQ(c->locals[0].name, "bitmap");
  const RegisterActionDecl* ra = c->FindRegisterAction("ra");
  ASSERT_NE(ra, nullptr);
  EXPECT_EQ(ra->value_param, "value");
  EXPECT_EQ(ra->result_param, "rv");
  ASSERT_EQ(ra->body.size(), 2u);
  EXPECT_EQ(ra->body[1]->kind, Stmt::Kind::kIf);
  ASSERT_EQ(ra->body[1]->else_body.size(), 1u);
  EXPECT_EQ(ra->body[1]->else_body[0]->kind, Stmt::Kind::kIf);
  const TableDecl* t = c->FindTable("t");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->keys.size(), 3u);
  EXPECT_EQ(t->keys[1].first, "md.kind");
  EXPECT_EQ(t->keys[2].second, "exact");
  ASSERT_EQ(t->actions.size(), 2u);
  EXPECT_EQ(t->default_action, "a2");
  ASSERT_EQ(t->entries.size(), 2u);
  EXPECT_TRUE(t->entries[0].keys[0].has_mask);
  EXPECT_EQ(t->entries[0].keys[0].mask, 1u);
  EXPECT_EQ(t->entries[0].keys[1].value, 4u);
  EXPECT_EQ(t->entries[0].args, std::vector<uint64_t>{8});
  EXPECT_TRUE(t->entries[1].keys[0].dont_care);
  EXPECT_EQ(t->entries[1].keys[2].value, 16u);
}

TEST(P4Reader, ErrorsNameFileAndLine) {
  try {
    Read("header h {\n  bit<8> a\n}\n");
    FAIL() << "expected a ReadError";
  } catch (const ReadError& e) {
    EXPECT_NE(std::string(e.what()).find("snippet.p4:3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Read("#ifdef X\nconst int a = 1;\n"), ReadError);
  EXPECT_THROW(Read("#include \"no_such_file.p4\"\n"), ReadError);
  // An unguarded file including itself is an error, not a stack overflow.
  const auto dir = std::filesystem::temp_directory_path() / "inasim_p4reader_cycle";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "self.p4") << "#include \"self.p4\"\n";
  EXPECT_THROW(Preprocess(dir.string(), "self.p4"), ReadError);
  std::filesystem::remove_all(dir);
  EXPECT_THROW(Read("const int a = b;"), ReadError);
}

}  // namespace
