// Self-test of p4model/tools/p4pipe (the whole-pipeline evaluator behind
// `inasim-p4 check`'s pipeline runs) on a small TNA program written for the
// test: each expectation is worked out by hand from the program text below.
#include "p4model/tools/p4pipe.h"

#include <gtest/gtest.h>

namespace {

using namespace inasim::p4tools;
using p4src::Parse;
using p4src::PreprocessText;
using Bytes = std::vector<uint8_t>;

constexpr const char* kProgram = R"(
#define GROUP 7
header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct hs_t { h_t h; }
struct md_t { bit<8> x; }
parser P(packet_in pkt, out hs_t hdr, out md_t meta, out ingress_intrinsic_metadata_t ig_intr_md) {
  state start {
    pkt.extract(ig_intr_md);
    pkt.advance(PORT_METADATA_SIZE);
    transition select(ig_intr_md.ingress_port) {
      0x004 &&& 0x1fc : parse_h;   // ports 4..7
      default : refuse;
    }
  }
  state parse_h { pkt.extract(hdr.h); transition accept; }
  state refuse { transition reject; }
}
control I(inout hs_t hdr, inout md_t meta, in ingress_intrinsic_metadata_t ig_intr_md,
          in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
          inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
          inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
  Register<bit<16>, bit<8>>(256) r;
  RegisterAction<bit<16>, bit<8>, bit<16>>(r) add = {
    void apply(inout bit<16> v, out bit<16> res) { v = v + hdr.h.c; res = v; }
  };
  action fwd(PortId_t p) { ig_tm_md.ucast_egress_port = p; }
  action mc() { ig_tm_md.mcast_grp_a = GROUP; }
  table t {
    key = { hdr.h.a : exact; }
    actions = { fwd; mc; }
    const entries = { 1 : fwd(3); 2 : mc(); }
    default_action = fwd(9);
  }
  apply {
    if (hdr.h.isValid()) {
      hdr.h.c = add.execute(hdr.h.b);
      t.apply();
      if (hdr.h.a == 4) { ig_dprsr_md.drop_ctl = 1; }
    }
  }
}
control D(packet_out pkt, inout hs_t hdr, in md_t meta, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
  apply { pkt.emit(hdr); }
}
header e_t { bit<8> tag; }
struct es_t { e_t e; }
struct em_t { }
parser EP(packet_in pkt, out es_t hdr, out em_t meta, out egress_intrinsic_metadata_t eg_intr_md) {
  state start { pkt.extract(eg_intr_md); pkt.extract(hdr.e); transition accept; }
}
control E(inout es_t hdr, inout em_t meta, in egress_intrinsic_metadata_t eg_intr_md,
          in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
          inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
          inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
  apply {
    hdr.e.tag = hdr.e.tag + (bit<8>) eg_intr_md.egress_port;
    if (eg_intr_md.egress_port == 2) { eg_dprsr_md.drop_ctl = 1; }
  }
}
control ED(packet_out pkt, inout es_t hdr, in em_t meta, in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
  apply { pkt.emit(hdr); }
}
)";

struct Pipe {
  p4src::Program prog = Parse(PreprocessText(kProgram, "pipe.p4"));
  PipelineEval eval{prog, {"P", "I", "D", "EP", "E", "ED"}, {{7, {1, 2, 5}}}};
};

TEST(P4Pipe, ReaderKeepsParserStatesActionBodiesAndApplyBlocks) {
  Pipe p;
  const p4src::ParserDecl* parser = p.prog.FindParser("P");
  ASSERT_NE(parser, nullptr);
  EXPECT_TRUE(parser->read);
  ASSERT_EQ(parser->states.size(), 3u);
  EXPECT_EQ(parser->states[0].cases.size(), 2u);
  EXPECT_EQ(parser->states[0].cases[0].keys[0].mask, 0x1fcu);
  EXPECT_TRUE(parser->states[0].cases[1].keys[0].dont_care);
  EXPECT_EQ(parser->states[2].next, "reject");
  const p4src::Control* c = p.prog.FindControl("I");
  EXPECT_TRUE(c->apply_read);
  EXPECT_TRUE(c->FindAction("fwd")->body_read);
}

TEST(P4Pipe, UnicastThroughTableRegisterActionAndEgress) {
  Pipe p;
  // Port 5 parses h: a = 1, b = 0x10, c = 5; r[0x10] = 0 + 5 -> c = 5;
  // t hits (1) -> fwd(3). Egress parses the packet's first byte as e.tag
  // and adds its port: 1 + 3.
  const PipelineOutcome o = p.eval.Run({1, 0x10, 0x00, 0x05, 0xaa}, 5);
  ASSERT_FALSE(o.dropped) << o.why;
  EXPECT_TRUE(o.unicast);
  EXPECT_EQ(o.port, 3);
  EXPECT_EQ(o.group, 0);
  EXPECT_EQ(o.frame, (Bytes{1, 0x10, 0x00, 0x05, 0xaa}));
  ASSERT_EQ(o.copies.size(), 1u);
  EXPECT_EQ(o.copies[0].port, 3);
  EXPECT_EQ(o.copies[0].frame, (Bytes{0x04, 0x10, 0x00, 0x05, 0xaa}));
  ASSERT_EQ(p.eval.TouchedCells().size(), 1u);
  EXPECT_EQ(p.eval.TouchedCells()[0].reg, "I.r");
  EXPECT_EQ(p.eval.TouchedCells()[0].index, 0x10u);
  EXPECT_EQ(p.eval.TouchedCells()[0].values, std::vector<uint64_t>{5});
}

TEST(P4Pipe, RegisterKeepsItsSumAndMulticastCopiesGoThroughEgressEach) {
  Pipe p;
  p.eval.Run({1, 0x10, 0x00, 0x05, 0}, 4);
  // a = 2: mc() -> group 7 = ports 1, 2, 5; r[0x10] = 5 + 7 = 12 -> c = 12.
  // Egress adds the port to e.tag (the first byte, 2) and drops port 2's copy.
  const PipelineOutcome o = p.eval.Run({2, 0x10, 0x00, 0x07, 0x20, 0x99}, 6);
  ASSERT_FALSE(o.dropped);
  EXPECT_FALSE(o.unicast);
  EXPECT_EQ(o.group, 7);
  EXPECT_EQ(o.frame, (Bytes{2, 0x10, 0x00, 0x0c, 0x20, 0x99}));
  ASSERT_EQ(o.copies.size(), 3u);
  EXPECT_EQ(o.copies[0].frame, (Bytes{0x03, 0x10, 0x00, 0x0c, 0x20, 0x99}));
  EXPECT_TRUE(o.copies[1].dropped);
  EXPECT_EQ(o.copies[2].port, 5);
  EXPECT_EQ(o.copies[2].frame, (Bytes{0x07, 0x10, 0x00, 0x0c, 0x20, 0x99}));
}

TEST(P4Pipe, DropsByDropCtlParserErrorAndRejectState) {
  Pipe p;
  // a = 4: the table misses (default fwd(9)), then drop_ctl = 1.
  PipelineOutcome o = p.eval.Run({4, 0, 0, 1}, 7);
  EXPECT_TRUE(o.dropped);
  EXPECT_EQ(o.why, "drop_ctl");
  EXPECT_TRUE(o.unicast);
  EXPECT_EQ(o.port, 9);
  // Three bytes: the 4-byte extract runs off the frame.
  o = p.eval.Run({1, 0, 0}, 4);
  EXPECT_EQ(o.why, "parser error");
  // Port 8 misses the 4..7 case: the default goes to a state that rejects.
  o = p.eval.Run({1, 0, 0, 1}, 8);
  EXPECT_EQ(o.why, "parser error");
  // Port 260 (0x104): the mask 0x1fc keeps bit 8, so it is not 4..7 either.
  o = p.eval.Run({1, 0, 0, 1}, 260);
  EXPECT_EQ(o.why, "parser error");
}

TEST(P4Pipe, ConstructsOutsideTheSubsetAreNamed) {
  const p4src::Program prog = Parse(PreprocessText(R"(
control C(inout bit<8> x) { apply { switch (x) { default: { } } } }
)", "bad.p4"));
  EXPECT_FALSE(prog.FindControl("C")->apply_read);
  try {
    PipelineEval e(prog, {"P", "C", "C", "", "", ""}, SwitchConfig{});
    FAIL() << "no parser P, and C's apply is outside the subset";
  } catch (const p4src::ReadError& err) {
    EXPECT_NE(std::string(err.what()).find("parser P"), std::string::npos) << err.what();
  }
}

}  // namespace
