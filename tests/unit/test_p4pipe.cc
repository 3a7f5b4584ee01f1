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

// A folded pipeline like SwitchML's, worked out by hand: a sub-control with
// its own register per instance and an `in`/`out` pair passed the same
// field, an indexed Counter, a table the controller fills (its keys on two
// headers, `apply().hit`), the port metadata, an 11-bit bridged header
// (padded to 2 bytes) emitted and parsed back on the recirculation port,
// then a multicast to group 0 with replication ids and a level-1 exclusion.
constexpr const char* kFolded = R"(
header h_t { bit<8> op; bit<8> idx; bit<16> v; }
header md_h { bit<3> pass; bit<8> acc; }
struct hs_t { md_h md; h_t h; }
struct pm_t { bit<8> boost; }
struct meta_t { pm_t pm; }
parser P(packet_in pkt, out hs_t hdr, out meta_t meta, out ingress_intrinsic_metadata_t ig_intr_md) {
  state start {
    pkt.extract(ig_intr_md);
    meta.pm = port_metadata_unpack<pm_t>(pkt);
    transition select(ig_intr_md.ingress_port, ig_intr_md.resubmit_flag) {
      (68, 0) : recirc;
      default : front;
    }
  }
  state recirc { pkt.extract(hdr.md); transition front; }
  state front { pkt.extract(hdr.h); transition accept; }
}
control Proc(in bit<16> a, out bit<16> a_out, in bit<8> i) {
  Register<bit<16>, bit<8>>(4) r;
  RegisterAction<bit<16>, bit<8>, bit<16>>(r) add = {
    void apply(inout bit<16> v) { v = v + a; }
  };
  apply {
    a_out = 7;
    a_out = a_out + a;
    add.execute(i);
  }
}
control I(inout hs_t hdr, inout meta_t meta, in ingress_intrinsic_metadata_t ig_intr_md,
          in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
          inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
          inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
  Proc() p0;
  Proc() p1;
  Counter<bit<32>, bit<8>>(4, CounterType_t.PACKETS) seen;
  action to(PortId_t port) { ig_tm_md.ucast_egress_port = port; ig_tm_md.bypass_egress = 1; }
  action bcast(bit<16> xid) { ig_tm_md.mcast_grp_a = 0; ig_tm_md.level1_exclusion_id = xid; }
  table route {
    key = { hdr.h.op : exact; hdr.md.pass : exact; }
    actions = { to; bcast; NoAction; }
    default_action = NoAction;
  }
  apply {
    seen.count(hdr.h.idx);
    if (!hdr.md.isValid()) {
      hdr.md.setValid();
      hdr.md.pass = 1;
      hdr.md.acc = meta.pm.boost;
      p0.apply(hdr.h.v, hdr.h.v, hdr.h.idx);
    } else {
      hdr.md.pass = hdr.md.pass + 1;
      p1.apply(hdr.h.v, hdr.h.v, hdr.h.idx);
    }
    if (!route.apply().hit) { ig_dprsr_md.drop_ctl = 1; }
  }
}
control D(packet_out pkt, inout hs_t hdr, in meta_t meta, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
  apply { pkt.emit(hdr); }
}
struct em_t { }
parser EP(packet_in pkt, out hs_t hdr, out em_t meta, out egress_intrinsic_metadata_t eg_intr_md) {
  state start { pkt.extract(eg_intr_md); pkt.extract(hdr.md); pkt.extract(hdr.h); transition accept; }
}
control E(inout hs_t hdr, inout em_t meta, in egress_intrinsic_metadata_t eg_intr_md,
          in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
          inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
          inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
  apply { hdr.h.v = hdr.h.v + eg_intr_md.egress_rid; }
}
control ED(packet_out pkt, inout hs_t hdr, in em_t meta, in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
  apply { pkt.emit(hdr.h); }
}
)";

struct Folded {
  p4src::Program prog = Parse(PreprocessText(kFolded, "folded.p4"));
  static SwitchConfig Config() {
    SwitchConfig c;
    // Group 0: ports 4 (rid 10, xid 0x8004), 5 (rid 11, xid 0x8005), 6 (rid 12, no xid).
    c.groups[0] = {{4, 10, 0x8004}, {5, 11, 0x8005}, {6, 12}};
    c.recirculation_ports = {68};
    // route: op 1 recirculates on pass 1, multicasts excluding 0x8005 on
    // pass 2; op 3 recirculates on every pass.
    auto& route = c.tables["I.route"];
    route.entries.push_back({{{1, 0xff}, {1, 0x7}}, "to", {68}});
    route.entries.push_back({{{1, 0xff}, {2, 0x7}}, "bcast", {0x8005}});
    for (uint64_t pass = 0; pass < 8; ++pass) route.entries.push_back({{{3, 0xff}, {pass, 0x7}}, "to", {68}});
    c.port_metadata[4] = {0x77, 0, 0, 0, 0, 0, 0, 0};
    return c;
  }
  PipelineEval eval{prog, {"P", "I", "D", "EP", "E", "ED"}, Config()};
};

TEST(P4Pipe, FoldedPassesInstancesCountersAndReplication) {
  Folded f;
  // Pass 1 (port 4, boost 0x77 from its port metadata): md set (pass 1,
  // acc 0x77); p0 gets a = 0x1234, writes a_out = 7 then a_out + a =
  // 0x123b (a is the copied-in 0x1234, not a_out), r[6 & 3] = 0x1234;
  // route (1, 1) -> to(68) with bypass: another pass.
  // Pass 2 (port 68): md parsed back (11 bits + 5 padding); pass 2; p1:
  // 7 + 0x123b = 0x1242, its own r[2] = 0x123b; route (1, 2) -> bcast:
  // group 0 minus xid 0x8005. Egress adds each copy's rid to v.
  const PipelineOutcome o = f.eval.Run({1, 6, 0x12, 0x34}, 4);
  ASSERT_FALSE(o.dropped) << o.why;
  EXPECT_EQ(o.passes, 2u);
  EXPECT_TRUE(o.multicast);
  EXPECT_EQ(o.group, 0);
  // md: pass 010, acc 01110111, 5 zero bits = 0x4e 0xe0; then h.
  EXPECT_EQ(o.frame, (Bytes{0x4e, 0xe0, 1, 6, 0x12, 0x42}));
  ASSERT_EQ(o.copies.size(), 2u);
  EXPECT_EQ(o.copies[0].port, 4);
  EXPECT_EQ(o.copies[0].frame, (Bytes{1, 6, 0x12, 0x4c}));  // 0x1242 + 10
  EXPECT_EQ(o.copies[1].port, 6);
  EXPECT_EQ(o.copies[1].frame, (Bytes{1, 6, 0x12, 0x4e}));  // 0x1242 + 12
  const auto cells = f.eval.TouchedCells();
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(cells[0].reg, "I.seen");  // both passes counted index 6 & 3 = 2
  EXPECT_EQ(cells[0].index, 2u);
  EXPECT_EQ(cells[0].values, std::vector<uint64_t>{2});
  EXPECT_EQ(cells[1].reg, "I.p0.r");
  EXPECT_EQ(cells[1].index, 2u);
  EXPECT_EQ(cells[1].values, std::vector<uint64_t>{0x1234});
  EXPECT_EQ(cells[3].reg, "I.p1.r");
  EXPECT_EQ(cells[3].values, std::vector<uint64_t>{0x123b});
}

// inasim-p4 check compares these with the model's after each run, so a count
// the model makes where upstream makes none is seen (TouchedCells lists only
// upstream's).
TEST(P4Pipe, CounterTotalsSumEveryIndexAndPass) {
  Folded f;
  EXPECT_TRUE(f.eval.CounterTotals().empty());
  f.eval.Run({1, 6, 0x12, 0x34}, 4);  // two passes: seen[2] twice
  f.eval.Run({2, 5, 0, 0}, 4);        // no route entry for op 2: dropped after seen[1]
  EXPECT_EQ(f.eval.CounterTotals(), (std::map<std::string, uint64_t>{{"I.seen", 3}}));
}

TEST(P4Pipe, FoldedMissDropsAndARecirculationLoopIsCut) {
  Folded f;
  // op 2: route misses (hit false) -> drop_ctl.
  PipelineOutcome o = f.eval.Run({2, 0, 0, 0}, 5);
  EXPECT_TRUE(o.dropped);
  EXPECT_EQ(o.why, "drop_ctl");
  EXPECT_EQ(o.passes, 1u);
  // op 3 recirculates on every pass: cut after 16.
  o = f.eval.Run({3, 0, 0, 0}, 5);
  EXPECT_TRUE(o.dropped);
  EXPECT_EQ(o.why, "recirculation limit");
  EXPECT_EQ(o.passes, 16u);
  // Port 5 has no port metadata: acc 0 on the first pass's md.
  o = f.eval.Run({1, 1, 0, 0}, 5);
  ASSERT_FALSE(o.dropped);
  EXPECT_EQ(o.frame[0], 0x40);  // pass 010, acc 0
  EXPECT_EQ(o.frame[1], 0x00);
}

TEST(P4Pipe, ATupleSelectsDefaultMatchesAnyTuple) {
  Folded f;
  // Port 69: (69, 0) is not (68, 0); `default` (one key for two
  // expressions) matches, so the frame is parsed as a front-panel one.
  const PipelineOutcome o = f.eval.Run({1, 0, 0, 0}, 69);
  EXPECT_EQ(o.passes, 2u);
  EXPECT_FALSE(o.dropped) << o.why;
}

// A DirectRegister (one cell per table entry, as SwitchML's psn_register of
// fill_in_qpn_and_psn) and `a +++ b` (`a ++ +b`, SwitchML's set_immediate).
constexpr const char* kDirect = R"(
header h_t { bit<8> k; bit<8> a; bit<8> b; bit<16> out; }
struct hs_t { h_t h; }
struct md_t { }
parser P(packet_in pkt, out hs_t hdr, out md_t meta, out ingress_intrinsic_metadata_t ig_intr_md) {
  state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.h); transition accept; }
}
control I(inout hs_t hdr, inout md_t meta, in ingress_intrinsic_metadata_t ig_intr_md,
          in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
          inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
          inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
  DirectRegister<bit<16>>() seq;
  DirectRegisterAction<bit<16>, bit<16>>(seq) next = {
    void apply(inout bit<16> v, out bit<16> r) { r = v; v = v + 1; }
  };
  action number(PortId_t port) { hdr.h.out = next.execute(); ig_tm_md.ucast_egress_port = port; }
  action cat() { hdr.h.out = hdr.h.a +++ hdr.h.b; ig_tm_md.ucast_egress_port = 1; }
  table t { key = { hdr.h.k : exact; } actions = { number; cat; } registers = seq; }
  apply { t.apply(); }
}
control D(packet_out pkt, inout hs_t hdr, in md_t meta, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
  apply { pkt.emit(hdr); }
}
)";

TEST(P4Pipe, DirectRegisterCellsAreTheTableEntriesAndUnaryPlusIsTheOperand) {
  const p4src::Program prog = Parse(PreprocessText(kDirect, "direct.p4"));
  ASSERT_TRUE(prog.FindControl("I")->FindRegisterAction("next"));
  EXPECT_TRUE(prog.FindControl("I")->FindRegisterAction("next")->direct);
  EXPECT_TRUE(prog.FindControl("I")->FindAction("cat")->body_read);
  SwitchConfig c;
  auto& t = c.tables["I.t"];
  t.entries.push_back({{{1, 0xff}}, "number", {2}});
  t.entries.push_back({{{2, 0xff}}, "number", {3}});
  t.entries.push_back({{{3, 0xff}}, "cat", {}});
  PipelineEval eval(prog, {"P", "I", "D", "", "", ""}, c);
  // Entry 0's cell counts 0, 1; entry 1's has its own, from 0.
  EXPECT_EQ(eval.Run({1, 0, 0, 0, 0}, 4).frame, (Bytes{1, 0, 0, 0, 0}));
  EXPECT_EQ(eval.Run({1, 0, 0, 0, 0}, 4).frame, (Bytes{1, 0, 0, 0, 1}));
  const PipelineOutcome o = eval.Run({2, 0, 0, 0, 0}, 4);
  EXPECT_EQ(o.frame, (Bytes{2, 0, 0, 0, 0}));
  EXPECT_EQ(o.port, 3);
  ASSERT_EQ(eval.TouchedCells().size(), 1u);
  EXPECT_EQ(eval.TouchedCells()[0].reg, "I.seq");
  EXPECT_EQ(eval.TouchedCells()[0].index, 1u);
  EXPECT_EQ(eval.TouchedCells()[0].values, std::vector<uint64_t>{1});
  // a +++ b = a ++ (+b): 0xab, 0xcd -> 0xabcd.
  EXPECT_EQ(eval.Run({3, 0xab, 0xcd, 0, 0}, 4).frame, (Bytes{3, 0xab, 0xcd, 0xab, 0xcd}));
}

}  // namespace
