// Tests for src/common/spec_fields.h (spec::Section): one declaration per key
// gives parsing (through spec::Reader: exact values, resolved echo, error
// texts), the JSON Schema and the docs' table rows. The second half takes the
// real workload.ring declaration (protocols/ring/host/spec.cc) and checks it
// alone against ParseScenario (values, resolved echo, error texts), including
// the elements_per_packet bound that depends on links.mtu_bytes.
#include "common/spec_fields.h"
#include "common/spec_reader.h"
#include "ina/scenario.h"
#include "protocols/ring/host/spec.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace inasim {
namespace {

using nlohmann::json;

enum class Color : uint8_t { kRed, kGreen, kBlue };

/// Every field kind a Section declares.
struct Demo {
  uint32_t count = 0;
  uint16_t port = 0;
  uint64_t bytes = 0;
  double rate_gbps = 0;
  uint64_t delay_ps = 0;
  bool enabled = true;
  std::string label;
  Color color = Color::kRed;
};

const spec::Section<Demo>& DemoSection() {
  static const auto section =
      spec::Section<Demo>("demo", "Demo section")
          .Required().U32("count", &Demo::count, 0, 1, 100, "hosts", "How many hosts.")
          .U16("port", &Demo::port, 4791, 1, 65535, "", "UDP port.")
          .U64("bytes", &Demo::bytes, 1 << 20, 4, 1ull << 40, "bytes", "Tensor size.")
          .AllowedNote("multiple of 4")
          .Num("rate_gbps", &Demo::rate_gbps, 100, 0.001, 10'000, "Gb/s", "Link rate.")
          .TimePs("delay_us", &Demo::delay_ps, 2, 0, 1e6, spec::TimeUnit::kUs, "One-way delay.")
          .Bool("enabled", &Demo::enabled, false, "Turns it on.")
          .Str("label", &Demo::label, "x", "Free text.")
          .Enum("color", &Demo::color, "green", {{"red", Color::kRed}, {"green", Color::kGreen}, {"blue", Color::kBlue}},
                "Colour | shade.")
          .Check([](const Demo& d, spec::Reader& r) {
            if (d.bytes % 4) r.Fail("bytes", fmt::format("must be a multiple of 4 (whole 32-bit elements), got {}", d.bytes));
          });
  return section;
}

struct DemoParsed {
  Demo d;
  json resolved;
};

DemoParsed ParseDemo(const json& j) {
  DemoParsed p;
  spec::Reader r(&j, "demo", &p.resolved);
  DemoSection().Parse(r, p.d);
  r.Done();
  return p;
}

std::string DemoError(const json& j) {
  try {
    ParseDemo(j);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(SpecFields, ParsesEveryKindWithDefaultsEchoed) {
  const DemoParsed p = ParseDemo(json{{"count", 3}});
  EXPECT_EQ(p.d.count, 3u);
  EXPECT_EQ(p.d.port, 4791);
  EXPECT_EQ(p.d.bytes, 1u << 20);
  EXPECT_EQ(p.d.rate_gbps, 100.0);
  EXPECT_EQ(p.d.delay_ps, 2'000'000u);
  EXPECT_FALSE(p.d.enabled);
  EXPECT_EQ(p.d.label, "x");
  EXPECT_EQ(p.d.color, Color::kGreen);
  EXPECT_EQ(p.resolved.dump(),
            R"({"bytes":1048576,"color":"green","count":3,"delay_us":2.0,"enabled":false,"label":"x","port":4791,)"
            R"("rate_gbps":100.0})");
}

TEST(SpecFields, ParsesGivenValues) {
  const DemoParsed p = ParseDemo(json::parse(R"J({"count": 100, "port": 65535, "bytes": 1099511627776,
      "rate_gbps": 0.5, "delay_us": 0.0015, "enabled": true, "label": "hi", "color": "blue"})J"));
  EXPECT_EQ(p.d.count, 100u);
  EXPECT_EQ(p.d.port, 65535);
  EXPECT_EQ(p.d.bytes, 1ull << 40);
  EXPECT_EQ(p.d.rate_gbps, 0.5);
  EXPECT_EQ(p.d.delay_ps, 1500u);  // 0.0015 us, rounded to the nearest ps
  EXPECT_TRUE(p.d.enabled);
  EXPECT_EQ(p.d.label, "hi");
  EXPECT_EQ(p.d.color, Color::kBlue);
  EXPECT_EQ(p.resolved.dump(),
            R"({"bytes":1099511627776,"color":"blue","count":100,"delay_us":0.0015,"enabled":true,"label":"hi",)"
            R"("port":65535,"rate_gbps":0.5})");
  // An integral float is an integer, null is absent (the Reader's rules).
  const DemoParsed q = ParseDemo(json::parse(R"J({"count": 7.0, "port": null})J"));
  EXPECT_EQ(q.d.count, 7u);
  EXPECT_EQ(q.d.port, 4791);
}

TEST(SpecFields, ErrorTextsAreTheReaders) {
  EXPECT_EQ(DemoError(json::object()), "demo.count: is required");
  EXPECT_EQ(DemoError({{"count", 3}, {"bytes", 2}}), "demo.bytes: must be between 4 and 1099511627776, got 2");
  EXPECT_EQ(DemoError({{"count", 3}, {"port", 70000}}), "demo.port: must be between 1 and 65535, got 70000");
  EXPECT_EQ(DemoError({{"count", -1}}), "demo.count: must be between 1 and 100, got -1");
  EXPECT_EQ(DemoError({{"count", 3}, {"rate_gbps", 0}}), "demo.rate_gbps: must be between 0.001 and 10000, got 0");
  EXPECT_EQ(DemoError({{"count", 3}, {"delay_us", 2e6}}), "demo.delay_us: must be between 0 and 1000000, got 2000000");
  EXPECT_EQ(DemoError({{"count", "3"}}), "demo.count: must be a non-negative integer, got the string \"3\"");
  EXPECT_EQ(DemoError({{"count", 3}, {"enabled", "yes"}}), "demo.enabled: must be true or false, got the string \"yes\"");
  EXPECT_EQ(DemoError({{"count", 3}, {"rate_gbps", "fast"}}), "demo.rate_gbps: must be a number, got the string \"fast\"");
  EXPECT_EQ(DemoError({{"count", 3}, {"label", 5}}), "demo.label: must be a string, got the integer 5");
  EXPECT_EQ(DemoError({{"count", 3}, {"color", "pink"}}),
            "demo.color: must be one of \"red\", \"green\", \"blue\", got \"pink\"");
  EXPECT_EQ(DemoError({{"count", 3}, {"colour", "red"}}), "demo.colour: unknown key (did you mean \"color\"?)");
  EXPECT_EQ(DemoError({{"count", 3}, {"zzzzzz", 1}}), "demo.zzzzzz: unknown key");
  EXPECT_EQ(DemoError(json::array()), "demo: must be an object, got an array");
}

TEST(SpecFields, CheckRunsAfterTheFields) {
  EXPECT_EQ(DemoError({{"count", 3}, {"bytes", 6}}), "demo.bytes: must be a multiple of 4 (whole 32-bit elements), got 6");
  // A field error comes first: the checks see only valid fields.
  EXPECT_EQ(DemoError({{"count", 3}, {"bytes", 6}, {"color", "pink"}}),
            "demo.color: must be one of \"red\", \"green\", \"blue\", got \"pink\"");
}

TEST(SpecFields, RequiredEnum) {
  struct E { Color c = Color::kRed; };
  const auto s = spec::Section<E>("e", "").Required().Enum("c", &E::c, "", {{"red", Color::kRed}, {"blue", Color::kBlue}}, "C.");
  json resolved;
  const json empty = json::object();
  spec::Reader r(&empty, "e", &resolved);
  E e;
  try {
    s.Parse(r, e);
    FAIL() << "no error";
  } catch (const ScenarioError& x) {
    EXPECT_STREQ(x.what(), "e.c: is required (one of \"red\", \"blue\")");
  }
  EXPECT_EQ(s.JsonSchema()["required"], json::array({"c"}));
  EXPECT_EQ(s.MarkdownRows(), "| `e.c` | string | | **required** | `\"red\"`, `\"blue\"` | C. |\n");
}

TEST(SpecFields, DeclarationMistakesAreLogicErrors) {
  struct S { uint16_t a = 0; uint64_t t = 0; uint32_t b = 0; Color c = Color::kRed; };
  EXPECT_THROW(spec::Section<S>("s", "").U16("a", &S::a, 0, 1, 10, "", ""), std::logic_error);   // default < lo
  EXPECT_THROW(spec::Section<S>("s", "").TimePs("t", &S::t, 1, 0, 2, spec::TimeUnit::kUs, ""), std::logic_error);
  EXPECT_THROW(spec::Section<S>("s", "").TimePs("t_ns", &S::t, 1, 0, 2, spec::TimeUnit::kUs, ""), std::logic_error);
  EXPECT_THROW(spec::Section<S>("s", "").U32("b", &S::b, 1, 0, 2, "", "").U32("b", &S::b, 1, 0, 2, "", ""),
               std::logic_error);  // declared twice
  EXPECT_THROW(spec::Section<S>("s", "").Enum("c", &S::c, "green", {{"red", Color::kRed}}, ""), std::logic_error);
  EXPECT_THROW(spec::Section<S>("s", "").MaxFrom([](const spec::NoContext&) { return 1; }, "x"), std::logic_error);
}

TEST(SpecFields, JsonSchemaOfEachKind) {
  const json s = DemoSection().JsonSchema();
  const json& p = s["properties"];
  EXPECT_EQ(p["count"], json::parse(R"J({"type": "integer", "minimum": 1, "maximum": 100,
                                        "description": "How many hosts. (unit: hosts)"})J"));
  EXPECT_EQ(p["bytes"], json::parse(R"J({"type": "integer", "default": 1048576, "minimum": 4,
                                        "maximum": 1099511627776, "description": "Tensor size. (unit: bytes)"})J"));
  EXPECT_EQ(p["port"], json::parse(R"J({"type": "integer", "default": 4791, "minimum": 1, "maximum": 65535,
                                       "description": "UDP port."})J"));
  EXPECT_EQ(p["rate_gbps"], json::parse(R"J({"type": "number", "default": 100.0, "minimum": 0.001, "maximum": 10000.0,
                                            "description": "Link rate. (unit: Gb/s)"})J"));
  EXPECT_EQ(p["delay_us"], json::parse(R"J({"type": "number", "default": 2.0, "minimum": 0.0, "maximum": 1e6,
                                           "description": "One-way delay. (unit: us)"})J"));
  EXPECT_EQ(p["enabled"], json::parse(R"J({"type": "boolean", "default": false, "description": "Turns it on."})J"));
  EXPECT_EQ(p["label"], json::parse(R"J({"type": "string", "default": "x", "description": "Free text."})J"));
  EXPECT_EQ(p["color"], json::parse(R"J({"type": "string", "default": "green", "enum": ["red", "green", "blue"],
                                        "description": "Colour | shade."})J"));
  EXPECT_EQ(s["title"], "Demo section");
  EXPECT_EQ(s["type"], "object");
  EXPECT_EQ(s["additionalProperties"], false);
  EXPECT_EQ(s["required"], json::array({"count"}));
  EXPECT_EQ(p.size(), 8u);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TEST(SpecFields, MarkdownRows) {
  const std::vector<std::string> rows = Lines(DemoSection().MarkdownRows());
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[0], "| `demo.count` | integer | hosts | **required** | 1 .. 100 | How many hosts. |");
  EXPECT_EQ(rows[2], "| `demo.bytes` | integer | bytes | `1048576` | 4 .. 2^40, multiple of 4 | Tensor size. |");
  EXPECT_EQ(rows[4], "| `demo.delay_us` | number | us | `2` | 0 .. 1e6 | One-way delay. |");
  EXPECT_EQ(rows[5], "| `demo.enabled` | boolean | | `false` | | Turns it on. |");
  EXPECT_EQ(rows[7], "| `demo.color` | string | | `\"green\"` | `\"red\"`, `\"green\"`, `\"blue\"` | Colour \\| shade. |");
}

// --- Structure: nested objects, variants, custom keys, context defaults -------

struct Inner {
  uint32_t depth = 0;
};
struct Outer {
  std::string kind;
  uint32_t width = 0, height = 0;
  Inner inner;
  std::vector<uint32_t> ids;
  uint32_t limit = 0;
  bool extra_read = false;
};

const spec::Section<Inner>& InnerSection() {
  static const auto s = spec::Section<Inner>("shape.inner", "Inner").U32("depth", &Inner::depth, 2, 1, 9, "", "Depth.");
  return s;
}
const spec::Section<Outer>& BoxKeys() {
  static const auto s = spec::Section<Outer>("shape", "Box").Named("shape:box")
                            .Required().U32("height", &Outer::height, 0, 1, 100, "", "Height.");
  return s;
}
const spec::Section<Outer>& ShapeSection() {
  static const auto s =
      spec::Section<Outer>("shape", "Shape")
          .Enum("kind", &Outer::kind, "square", {{"square", std::string("square")}, {"box", std::string("box")}}, "Kind.")
          .U32("width", &Outer::width, 4, 1, 100, "", "Width.")
          .When("kind", {"box"}, BoxKeys())
          .Object("inner", &Outer::inner, InnerSection(), "The inner part.")
          .Custom("ids", {"array of integers", "", "`[]`", "each 0 .. 9", "Ids."},
                  [] { return json{{"type", "array"}, {"items", {{"type", "integer"}, {"maximum", 9}}}}; },
                  [](spec::Reader& r, Outer& o, const spec::NoContext&) {
                    const json* v = r.Raw("ids");
                    r.out()["ids"] = v ? *v : json::array();
                    if (v)
                      for (const json& x : *v) o.ids.push_back(x.get<uint32_t>());
                  })
          .U32("limit", &Outer::limit, 1, 1, 1000, "", "At least the width.")
          .MinFrom([](const Outer& o, const spec::NoContext&) -> uint64_t { return o.width; }, "width")
          .DefaultFrom([](const Outer& o, const spec::NoContext&) { return o.width * 2; }, "`2 x width`")
          .Bool("extra", &Outer::extra_read, false, "Read only with a box.")
          .ReadIf([](spec::Reader&, const Outer& o, const spec::NoContext&) { return o.kind == "box"; });
  return s;
}

struct ShapeParsed {
  Outer o;
  json resolved;
  std::string error;
};

ShapeParsed ParseShape(const json& j) {
  ShapeParsed p;
  try {
    spec::Reader r(&j, "shape", &p.resolved);
    ShapeSection().Parse(r, p.o);
    r.Done();
  } catch (const ScenarioError& e) {
    p.error = e.what();
  }
  return p;
}

TEST(SpecFieldsStructure, VariantsObjectsCustomKeysAndContextBounds) {
  const ShapeParsed a = ParseShape(json{{"width", 5}});
  ASSERT_EQ(a.error, "");
  EXPECT_EQ(a.o.limit, 10u);  // DefaultFrom: 2 x width
  EXPECT_EQ(a.o.inner.depth, 2u);
  EXPECT_EQ(a.resolved.dump(), R"({"ids":[],"inner":{"depth":2},"kind":"square","limit":10,"width":5})");
  const ShapeParsed b = ParseShape(json::parse(R"({"kind":"box","height":3,"ids":[1,2],"extra":true,"limit":7,
                                                  "width":7,"inner":{"depth":9}})"));
  ASSERT_EQ(b.error, "");
  EXPECT_EQ(b.o.height, 3u);
  EXPECT_EQ(b.o.ids, (std::vector<uint32_t>{1, 2}));
  EXPECT_TRUE(b.o.extra_read);
  EXPECT_EQ(b.o.inner.depth, 9u);
  // The variant's keys exist only with it; a required one is required there.
  EXPECT_EQ(ParseShape(json{{"height", 3}}).error, "shape.height: unknown key");
  EXPECT_EQ(ParseShape(json{{"kind", "box"}}).error, "shape.height: is required");
  EXPECT_EQ(ParseShape(json{{"extra", true}}).error, "shape.extra: unknown key");  // ReadIf: not read, not known
  EXPECT_EQ(ParseShape(json{{"width", 8}, {"limit", 7}}).error, "shape.limit: must be between 8 and 1000, got 7");
  EXPECT_EQ(ParseShape(json{{"inner", {{"depht", 1}}}}).error, "shape.inner.depht: unknown key (did you mean \"depth\"?)");
}

TEST(SpecFieldsStructure, SchemaAndDocsOfTheStructure) {
  const json s = ShapeSection().JsonSchema();
  EXPECT_EQ(s["unevaluatedProperties"], false);  // a variant: closed after the if/then
  EXPECT_FALSE(s.contains("additionalProperties"));
  ASSERT_EQ(s["allOf"].size(), 1u);
  EXPECT_EQ(s["allOf"][0]["if"], json::parse(R"({"properties":{"kind":{"const":"box"}},"required":["kind"]})"));
  EXPECT_EQ(s["allOf"][0]["then"]["required"], json::array({"height"}));
  EXPECT_EQ(s["properties"]["inner"]["additionalProperties"], false);
  EXPECT_EQ(s["properties"]["inner"]["description"], "The inner part.");
  EXPECT_EQ(s["properties"]["ids"]["type"], "array");
  EXPECT_FALSE(s["properties"]["limit"].contains("default"));  // it depends on width
  EXPECT_FALSE(s.contains("required"));                         // extra is read only sometimes
  EXPECT_EQ(Lines(ShapeSection().MarkdownRows())[4],
            "| `shape.limit` | integer | | `2 x width` | width .. 1000 | At least the width. |");
  EXPECT_EQ(Lines(ShapeSection().MarkdownRows())[3], "| `shape.ids` | array of integers | | `[]` | each 0 .. 9 | Ids. |");
  std::vector<const spec::Doc*> docs;
  spec::CollectDocs(ShapeSection(), docs);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[1]->name(), "shape:box");
  EXPECT_EQ(docs[2]->name(), "shape.inner");
  EXPECT_EQ(ShapeSection().Keys(), (std::vector<std::string>{"kind", "width", "inner", "ids", "limit", "extra"}));
}

TEST(SpecFieldsReader, ConfigDialectKeepsTheConfigTexts) {
  auto err = [](const json& j) {
    json out;
    try {
      spec::Reader r(&j, "", &out, spec::Reader::Texts::kConfig);
      r.U64("port", 0, 0, 65535);
      r.Done();
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_EQ(err({{"port", 70000}}), "port: must be an integer in 0..65535, got 70000");
  EXPECT_EQ(err({{"port", 1.5}}), "port: must be an integer in 0..65535, got 1.5");
  EXPECT_EQ(err({{"port", -1}}), "port: must be an integer in 0..65535, got -1");
  EXPECT_EQ(err({{"port", 1}, {"prot", 2}}), "unknown key \"prot\" (known: port)");
}

// --- workload.ring, as protocols/ring/host/spec.cc declares it ----------------

const protocols::ring::RingSection& Ring() { return protocols::ring::Section(); }

struct RingResult {
  RingSpec ring;
  json resolved;
  std::string error;  // empty: parsed
};

json ScenarioWithRing(const json& ring, uint32_t mtu) {
  return {{"topology", {{"type", "single_rack"}, {"hosts", 4}}},
          {"links", {{"mtu_bytes", mtu}}},
          {"workload", {{"ring", ring}}}};
}

RingResult ViaParseScenario(const json& ring, uint32_t mtu) {
  RingResult out;
  try {
    const Scenario s = ParseScenario(ScenarioWithRing(ring, mtu));
    out.ring = s.workload.spec<RingSpec>();
    out.resolved = s.resolved["workload"]["ring"];
  } catch (const ScenarioError& e) {
    out.error = e.what();
  }
  return out;
}

RingResult ViaSection(const json& ring, uint32_t mtu) {
  RingResult out;
  Scenario ctx;
  ctx.links.mtu_bytes = mtu;
  try {
    spec::Reader r(&ring, "workload.ring", &out.resolved);
    Ring().Parse(r, out.ring, ctx);
    r.Done();
  } catch (const ScenarioError& e) {
    out.error = e.what();
  }
  return out;
}

/// Both parsers agree; `valid`: and they accept it (so the agreement is not
/// two identical errors from elsewhere in the scenario).
void ExpectSameRing(const json& ring, uint32_t mtu, bool valid = false) {
  SCOPED_TRACE(ring.dump() + " at MTU " + std::to_string(mtu));
  const RingResult a = ViaParseScenario(ring, mtu), b = ViaSection(ring, mtu);
  EXPECT_EQ(a.error, b.error);
  if (valid) {
    EXPECT_EQ(a.error, "");
  }
  if (!a.error.empty()) return;
  EXPECT_EQ(a.resolved.dump(), b.resolved.dump());
  EXPECT_EQ(a.ring.elements_per_packet, b.ring.elements_per_packet);
  EXPECT_EQ(a.ring.window_packets, b.ring.window_packets);
  EXPECT_EQ(a.ring.ack_every, b.ring.ack_every);
  EXPECT_EQ(a.ring.ack_delay_ps, b.ring.ack_delay_ps);
  EXPECT_EQ(a.ring.rto_ps, b.ring.rto_ps);
  EXPECT_EQ(a.ring.udp_port, b.ring.udp_port);
}

TEST(SpecFieldsRing, ParsesAsParseScenarioDoes) {
  ExpectSameRing(json::object(), 1500, true);
  ExpectSameRing(json::parse(R"J({"elements_per_packet": 364, "window_packets": 16, "ack_every": 1,
                                 "ack_delay_us": 0.5, "rto_us": 0.0015, "udp_port": 1})J"), 1500, true);
  ExpectSameRing(json::parse(R"({"elements_per_packet": 2243, "udp_port": 65535, "rto_us": 1e9})"), 9016, true);
  ExpectSameRing(json::parse(R"({"window_packets": null, "ack_every": 65536.0})"), 128, true);
  // The section really read the values (not only agreed with ParseScenario).
  const RingResult r = ViaSection(json::parse(R"({"elements_per_packet": 100, "rto_us": 0.0015})"), 1500);
  EXPECT_EQ(r.ring.elements_per_packet, 100u);
  EXPECT_EQ(r.ring.rto_ps, 1500u);
  EXPECT_EQ(r.ring.window_packets, 64u);
}

TEST(SpecFieldsRing, SameErrorTexts) {
  const std::vector<std::pair<json, std::string>> bad = {
      {json{{"elements_per_packet", 365}}, "workload.ring.elements_per_packet: must be between 0 and 364, got 365"},
      {json{{"window_packets", 0}}, "workload.ring.window_packets: must be between 1 and 1048576, got 0"},
      {json{{"ack_every", true}}, "workload.ring.ack_every: must be a non-negative integer, got a boolean"},
      {json{{"ack_delay_us", -1}}, "workload.ring.ack_delay_us: must be between 0 and 1000000, got -1"},
      {json{{"rto_us", "fast"}}, "workload.ring.rto_us: must be a number, got the string \"fast\""},
      {json{{"udp_port", 70000}}, "workload.ring.udp_port: must be between 1 and 65535, got 70000"},
      {json{{"windw_packets", 8}}, "workload.ring.windw_packets: unknown key (did you mean \"window_packets\"?)"},
      {json(5), "workload.ring: must be an object, got the integer 5"},
      // Two errors: the first declared field's comes first, as in the hand-written parser.
      {json{{"elements_per_packet", 400}, {"window_packets", 0}},
       "workload.ring.elements_per_packet: must be between 0 and 364, got 400"},
  };
  for (const auto& [ring, message] : bad) {
    ExpectSameRing(ring, 1500);
    EXPECT_EQ(ViaSection(ring, 1500).error, message);
  }
  // The bound follows the MTU: 2293 at 9216, 21 at 128.
  EXPECT_EQ(ViaSection(json{{"elements_per_packet", 2294}}, 9216).error,
            "workload.ring.elements_per_packet: must be between 0 and 2293, got 2294");
  ExpectSameRing(json{{"elements_per_packet", 2294}}, 9216);
  ExpectSameRing(json{{"elements_per_packet", 22}}, 128);
}

TEST(SpecFieldsRing, DocsRowsAndSchema) {
  // Byte for byte the rows of docs/SCENARIO.md's "#### workload.ring" table.
  EXPECT_EQ(Ring().MarkdownRows(),
            "| `workload.ring.elements_per_packet` | integer | elements | `0` | 0 .. (mtu_bytes - 44) / 4 (364 at MTU "
            "1500) | Elements per data packet; `0` fills the MTU (IP 20 + UDP 8 + ring header 16 = 44 bytes of "
            "headers). |\n"
            "| `workload.ring.window_packets` | integer | packets | `64` | 1 .. 2^20 | Unacknowledged packets "
            "allowed per stream. |\n"
            "| `workload.ring.ack_every` | integer | packets | `8` | 1 .. 65536 | One (cumulative + 64-bit selective) "
            "ACK per this many data packets. |\n"
            "| `workload.ring.ack_delay_us` | number | us | `2` | 0 .. 1e6 | A partial ACK batch is flushed after this "
            "long. |\n"
            "| `workload.ring.rto_us` | number | us | `200` | 0.001 .. 1e9 | Retransmission timeout. |\n"
            "| `workload.ring.udp_port` | integer | | `4791` | 1 .. 65535 | UDP port of the ring traffic. |\n");
  EXPECT_EQ(Ring().JsonSchema()["properties"]["elements_per_packet"],
            json::parse(R"J({"type": "integer", "default": 0, "minimum": 0, "maximum": 2293,
                "description": "Elements per data packet; `0` fills the MTU (IP 20 + UDP 8 + ring header 16 = 44 bytes of headers). (unit: elements) At most (mtu_bytes - 44) / 4 (364 at MTU 1500)."})J"));
}

}  // namespace
}  // namespace inasim
