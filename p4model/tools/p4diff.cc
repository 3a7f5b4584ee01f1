#include "p4model/tools/p4diff.h"

#include "p4model/common/model_check.h"
#include "p4model/tools/p4eval.h"
#include "p4model/tools/p4pipe.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>

namespace inasim::p4tools {
namespace {

using nlohmann::json;
using Status = CheckRow::Status;


/// Values every width gets tried with: 0, 1, 2, -1 (all ones), -2, INT_MIN, INT_MIN + 1, INT_MAX.
std::vector<uint64_t> EdgeValues(int w) {
  std::set<uint64_t> v = {0, 1 & MaskOf(w), 2 & MaskOf(w), MaskOf(w), (MaskOf(w) - 1) & MaskOf(w)};
  if (w >= 1) {
    v.insert(uint64_t{1} << (w - 1));
    v.insert(((uint64_t{1} << (w - 1)) + 1) & MaskOf(w));
    v.insert(MaskOf(w - 1));
  }
  return {v.begin(), v.end()};
}

std::string Hex(uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

// The model side (register action functions, table lookups) comes from each
// model-checked program's bindings (p4model/common/model_check.h).
using p4::RegisterActionBinding;
using p4::TableBinding;
using p4::TableResult;

// ---------------------------------------------------------------------------
// Drivers
// ---------------------------------------------------------------------------

/// Inputs: every combination of edge values when there are few, exhaustive when
/// the total width is small, then random values (a quarter of them edge values)
/// up to `n`. Calls fn(values) for each; returns the number of inputs.
uint64_t Drive(const std::vector<int>& widths, const std::vector<std::vector<uint64_t>>& interesting, uint64_t n,
               std::mt19937_64& rng, const std::function<void(const uint64_t*)>& fn) {
  const size_t k = widths.size();
  std::vector<uint64_t> v(k, 0);
  uint64_t count = 0;
  int total_bits = 0;
  for (int w : widths) total_bits += w;
  if (total_bits <= 20) {  // exhaustive
    for (uint64_t x = 0; x < (uint64_t{1} << total_bits); ++x) {
      uint64_t rest = x;
      for (size_t i = 0; i < k; ++i) {
        v[i] = rest & MaskOf(widths[i]);
        rest >>= widths[i];
      }
      fn(v.data());
      ++count;
    }
    return count;
  }
  uint64_t combos = 1;
  for (const auto& s : interesting) combos = std::min<uint64_t>(combos * std::max<size_t>(s.size(), 1), uint64_t{1} << 40);
  if (combos <= 250'000) {
    std::vector<size_t> idx(k, 0);
    for (;;) {
      for (size_t i = 0; i < k; ++i) v[i] = interesting[i].empty() ? 0 : interesting[i][idx[i]];
      fn(v.data());
      ++count;
      size_t i = 0;
      while (i < k && ++idx[i] >= interesting[i].size()) idx[i++] = 0;
      if (i == k) break;
    }
  }
  while (count < n) {
    for (size_t i = 0; i < k; ++i) {
      const uint64_t r = rng();
      v[i] = (r & 3) == 0 && !interesting[i].empty() ? interesting[i][(r >> 2) % interesting[i].size()]
                                                      : rng() & MaskOf(widths[i]);
    }
    fn(v.data());
    ++count;
  }
  return count;
}

void DiffRegisterAction(const p4src::Program& prog, const p4src::Control& c, const p4src::RegisterActionDecl& a,
                        const RegisterActionBinding& bind, uint64_t n, std::mt19937_64& rng, DiffSummary& sum,
                        CheckReport& report) {
  const std::string item = c.name + "." + a.name;
  const RegisterActionEval eval(prog, c, a);
  // Map the model's parameter order onto the upstream body's reads.
  std::vector<std::string> up_names;
  for (const auto& s : eval.inputs()) up_names.push_back(s.name);
  std::vector<size_t> perm;
  for (const auto& name : bind.inputs) {
    auto it = std::find(up_names.begin(), up_names.end(), name);
    if (it == up_names.end()) break;
    perm.push_back(static_cast<size_t>(it - up_names.begin()));
  }
  if (perm.size() != bind.inputs.size() || bind.inputs.size() != up_names.size()) {
    report.Add("differential", item, Status::kMismatch,
               "upstream reads " + json(up_names).dump() + ", the model's function takes " + json(bind.inputs).dump());
    ++sum.failures;
    return;
  }
  const size_t ncell = eval.cell().size(), nin = up_names.size();
  std::vector<int> widths;
  std::vector<std::vector<uint64_t>> interesting;
  for (const auto& s : eval.cell()) widths.push_back(s.width);
  for (const auto& s : eval.inputs()) widths.push_back(s.width);
  for (int w : widths) interesting.push_back(EdgeValues(w));
  const uint64_t rmask = MaskOf(eval.result().width);
  uint64_t bad = 0;
  std::string first;
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t ran = Drive(widths, interesting, n, rng, [&](const uint64_t* v) {
    uint64_t up_cell[8], model_cell[8], model_in[8];
    for (size_t i = 0; i < ncell; ++i) up_cell[i] = model_cell[i] = v[i];
    for (size_t i = 0; i < nin; ++i) model_in[i] = v[ncell + perm[i]];
    const uint64_t up_r = eval.Run(up_cell, v + ncell) & rmask;
    const uint64_t model_r = bind.run(model_cell, model_in) & rmask;
    bool same = up_r == model_r;
    for (size_t i = 0; i < ncell; ++i) same = same && (up_cell[i] & MaskOf(eval.cell()[i].width)) == (model_cell[i] & MaskOf(eval.cell()[i].width));
    if (same) return;
    if (bad++ == 0) {
      std::ostringstream o;
      o << "first difference: cell (";
      for (size_t i = 0; i < ncell; ++i) o << (i ? ", " : "") << Hex(v[i]);
      o << ")";
      for (size_t i = 0; i < nin; ++i) o << " " << up_names[i] << "=" << Hex(v[ncell + i]);
      o << " -> upstream result " << Hex(up_r) << " cell (";
      for (size_t i = 0; i < ncell; ++i) o << (i ? ", " : "") << Hex(up_cell[i]);
      o << "), model result " << Hex(model_r) << " cell (";
      for (size_t i = 0; i < ncell; ++i) o << (i ? ", " : "") << Hex(model_cell[i] & MaskOf(eval.cell()[i].width));
      o << ")";
      first = o.str();
    }
  });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++sum.register_actions;
  sum.inputs += ran;
  std::ostringstream d;
  d << ran << " inputs, " << bad << " differ (" << a.loc.str() << ", " << static_cast<int>(secs * 1000) << " ms)";
  if (bad) {
    ++sum.failures;
    report.Add("differential", "register action " + item, Status::kMismatch, d.str() + "; " + first);
  } else {
    report.Add("differential", "register action " + item, Status::kMatch, d.str());
  }
}

struct UpEntry {
  std::vector<uint64_t> value, mask;
  std::string action;
  std::vector<uint64_t> args;
};

void DiffTable(const std::string& item, const json& table, const json& entries, const TableBinding& model, uint64_t n,
               std::mt19937_64& rng, DiffSummary& sum, CheckReport& report) {
  std::vector<int> widths;
  for (const auto& k : table.at("keys")) widths.push_back(k.at("width").get<int>() < 0 ? 64 : k.at("width").get<int>());
  std::vector<UpEntry> up;
  std::vector<std::set<uint64_t>> near(widths.size());
  for (const auto& e : entries) {
    UpEntry u;
    for (size_t k = 0; k < widths.size(); ++k) {
      u.value.push_back(e.at("keys").at(k).at(0).get<uint64_t>());
      u.mask.push_back(e.at("keys").at(k).at(1).get<uint64_t>());
      // Values near each entry: the value itself, one bit off, and the don't-care bits set.
      near[k].insert(u.value[k]);
      near[k].insert((u.value[k] ^ 1) & MaskOf(widths[k]));
      near[k].insert((u.value[k] | ~u.mask[k]) & MaskOf(widths[k]));
    }
    u.action = e.at("action").get<std::string>();
    u.args = e.at("args").get<std::vector<uint64_t>>();
    up.push_back(u);
  }
  const TableResult def{table.at("default_action").get<std::string>(), table.at("default_args").get<std::vector<uint64_t>>()};
  std::vector<std::vector<uint64_t>> interesting;
  for (size_t k = 0; k < widths.size(); ++k) {
    std::set<uint64_t> s = near[k];
    for (uint64_t e : EdgeValues(widths[k])) s.insert(e);
    interesting.emplace_back(s.begin(), s.end());
  }
  uint64_t bad = 0;
  std::string first;
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t ran = Drive(widths, interesting, n, rng, [&](const uint64_t* v) {
    const TableResult* want = &def;
    TableResult hit;
    for (const UpEntry& e : up) {
      bool match = true;
      for (size_t k = 0; k < widths.size() && match; ++k) match = ((v[k] ^ e.value[k]) & e.mask[k]) == 0;
      if (match) {
        want = nullptr;
        hit = {e.action, e.args};
        break;
      }
    }
    const TableResult& expected = want ? *want : hit;
    const TableResult got = model(v);
    if (got == expected) return;
    if (bad++ == 0) {
      std::ostringstream o;
      o << "first difference: keys (";
      for (size_t k = 0; k < widths.size(); ++k) o << (k ? ", " : "") << Hex(v[k]);
      o << ") -> upstream " << expected.first << json(expected.second).dump() << ", model " << got.first
        << json(got.second).dump();
      first = o.str();
    }
  });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++sum.tables;
  sum.inputs += ran;
  std::ostringstream d;
  d << ran << " inputs, " << bad << " differ (" << static_cast<int>(secs * 1000) << " ms)";
  if (bad) {
    ++sum.failures;
    report.Add("differential", "table " + item, Status::kMismatch, d.str() + "; " + first);
  } else {
    report.Add("differential", "table " + item, Status::kMatch, d.str());
  }
}

std::string HexBytes(const std::vector<uint8_t>& b) {
  std::ostringstream o;
  o << std::hex;
  for (uint8_t x : b) o << (x < 16 ? "0" : "") << int(x);
  return o.str();
}

/// A frame of the binding's shape: mostly `bytes`, sometimes shorter or
/// longer; random bytes, the binding's fields mostly drawn from their sets
/// (linked fields at one index).
std::vector<uint8_t> RandomFrame(const std::vector<p4::PipelineField>& fields, size_t bytes, std::mt19937_64& rng) {
  const uint64_t shape = rng() % 10;
  const size_t n = shape == 0 ? rng() % bytes : shape == 1 ? bytes + 1 + rng() % 32 : bytes;
  std::vector<uint8_t> f(n);
  for (uint8_t& x : f) x = static_cast<uint8_t>(rng());
  std::map<int, std::optional<size_t>> linked;  // link -> the drawn index, or nullopt: not set
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const auto& field : fields) {
    const bool fits = field.offset + static_cast<size_t>(field.bytes) <= n;
    std::optional<size_t> pick;
    if (field.link >= 0 && linked.count(field.link)) {
      pick = linked[field.link];
    } else if (field.link < 0 && field.probability == 0.75) {
      // One draw in four leaves the field random (the first bindings' rule,
      // kept draw for draw so their runs stay as they were).
      if (rng() % 4 == 0 || !fits) continue;
      pick = rng() % field.values.size();
    } else {
      if (unit(rng) < field.probability) pick = rng() % field.values.size();
      if (field.link >= 0) linked[field.link] = pick;
    }
    if (!pick || !fits) continue;
    const uint64_t v = field.values[*pick % field.values.size()];
    for (int i = 0; i < field.bytes; ++i) f[field.offset + i] = static_cast<uint8_t>(v >> (8 * (field.bytes - 1 - i)));
  }
  return f;
}

std::string Fate(const p4::PipelineResult& r) {
  if (r.copies.empty()) return "drop";
  std::string s;
  for (const auto& [port, frame] : r.copies)
    s += (s.empty() ? "" : "; ") + (port == 0xffff ? std::string("routed") : "port " + std::to_string(port)) + ", " +
         HexBytes(frame);
  return s;
}

/// The copies leaving the switch, by port: upstream's after egress (the
/// model's are its PipelineResult).
using Copies = std::vector<std::pair<uint16_t, std::vector<uint8_t>>>;
Copies UpstreamCopies(const PipelineOutcome& up) {
  Copies out;
  for (const auto& c : up.copies)
    if (!c.dropped) out.emplace_back(c.port, c.frame);
  return out;
}
/// The first register cell this frame touched upstream (in any pass, in the
/// pass's pipe) whose model copy differs (or that the model does not keep);
/// "" when all agree.
std::string CellDifference(const PipelineEval& up, const p4::PipelineModel& model) {
  for (const auto& c : up.TouchedCells()) {
    const auto mine = model.cell(c.reg, c.pipe, c.index);
    if (!mine) return c.reg + " is not kept by the model";
    if (*mine != c.values) {
      std::ostringstream o;
      o << c.reg << "[" << c.index << "] in pipe " << c.pipe << ": upstream";
      for (uint64_t v : c.values) o << " " << Hex(v);
      o << ", model";
      for (uint64_t v : *mine) o << " " << Hex(v);
      return o.str();
    }
  }
  return "";
}

/// The first counter the model keeps whose total (packets over pipes and
/// indexes) differs from upstream's, one upstream never counted being 0; ""
/// when all agree or the model gives no totals.
std::string CounterTotalDifference(const PipelineEval& up, const p4::PipelineModel& model) {
  if (!model.counter_totals) return "";
  const std::map<std::string, uint64_t> ups = up.CounterTotals();
  for (const auto& [name, mine] : model.counter_totals()) {
    const auto it = ups.find(name);
    const uint64_t theirs = it == ups.end() ? 0 : it->second;
    if (theirs != mine)
      return name + " counted " + std::to_string(theirs) + " packets upstream, " + std::to_string(mine) + " in the model";
  }
  return "";
}

/// Upstream pipeline (PipelineEval: every pipe of TNA's Switch(pipe)) against
/// the model, run by run; a run stops at its first differing frame or cell.
void DiffPipeline(const p4src::Program& prog, const p4::PipelineBinding& b, const p4::PipelineBinding::Variant& variant,
                  uint64_t packets, std::mt19937_64& rng, DiffSummary& sum, CheckReport& report) {
  constexpr uint64_t kPerRun = 48;
  const PipelineBlocks blocks{b.parser, b.control, b.deparser, b.egress_parser, b.egress_control, b.egress_deparser};
  const SwitchConfig config{b.groups, {b.recirculation_ports.begin(), b.recirculation_ports.end()}, variant.tables,
                            variant.port_metadata};
  const std::string item = "pipeline " + b.parser + " -> " + b.control + " -> " + b.deparser +
                           (b.egress_parser.empty() ? "" : " -> " + b.egress_control) + " (" + variant.name + ")";
  uint64_t sent = 0, frames = 0, runs = 0, bad_runs = 0;  // sent: the budget used; frames: compared
  std::map<std::string, uint64_t> fates;
  std::string first;
  while (sent < packets) {
    ++runs;
    PipelineEval upstream(prog, blocks, config);
    const p4::PipelineModel model = variant.make();
    bool diverged = false;
    uint64_t k = 0;
    for (; k < kPerRun && sent < packets; ++k, ++sent) {
      const std::vector<uint8_t> frame =
          RandomFrame(variant.fields ? *variant.fields : b.fields, variant.frame_bytes.value_or(b.frame_bytes), rng);
      const uint16_t port = b.ports[rng() % b.ports.size()];
      const PipelineOutcome up = upstream.Run(frame, port);
      const p4::PipelineResult mo = model.run(frame, port);
      ++frames;
      ++fates[(up.passes > 1 ? std::to_string(up.passes) + " passes, " : "") +
              (up.dropped ? "drop (" + up.why + ")"
               : up.unicast ? (up.port == port ? "to its port" : "to port " + std::to_string(up.port))
                            : up.multicast ? "group " + std::to_string(up.group) : "no egress")];
      const bool same_out = UpstreamCopies(up) == mo.copies;
      const std::string cells = same_out ? CellDifference(upstream, model) : "";
      if (same_out && cells.empty()) continue;
      ++bad_runs;
      if (first.empty())
        first = "first at frame " + std::to_string(k) + " of a run, port " + std::to_string(port) + ", in " + HexBytes(frame) +
                (same_out ? ": same output, but " + cells
                          : ": upstream " + up.Describe() + (up.copies.empty() ? "" : " " + HexBytes(up.copies[0].frame)) +
                                "; model " + Fate(mo));
      sent += kPerRun - k - 1;  // the states have diverged: next run
      diverged = true;
      break;
    }
    // Counter totals once per run (the model's may sum long arrays).
    if (const std::string counts = diverged ? "" : CounterTotalDifference(upstream, model); !counts.empty()) {
      ++bad_runs;
      if (first.empty()) first = "after a run of " + std::to_string(k) + " frames, same outputs and cells, but " + counts;
    }
  }
  std::ostringstream d;
  d << frames << " frames in " << runs << " runs of " << kPerRun << ", " << bad_runs << " runs differ; upstream fates:";
  for (const auto& [fate, n] : fates) d << " " << fate << " " << n << ";";
  sum.pipeline_packets += frames;
  ++sum.pipelines;
  if (bad_runs > 0) {
    ++sum.failures;
    report.Add("differential", item, Status::kMismatch, d.str() + " " + first);
  } else {
    report.Add("differential", item, Status::kMatch, d.str());
  }
}

}  // namespace

DiffSummary RunDifferential(const std::string& program, const p4src::Program& prog, const json& manifest, uint64_t inputs,
                            uint64_t seed, CheckReport& report, const std::string& source_root) {
  DiffSummary sum;
  std::mt19937_64 rng(seed);
  const p4::ModelCheckedProgram& checked = ModelChecked(program);
  const describe::ModelDescription model = checked.describe();
  auto modeled = [&](const std::string& control) {
    return std::find(model.controls.begin(), model.controls.end(), control) != model.controls.end();
  };
  for (const p4src::Control& c : prog.controls) {
    if (!modeled(c.name)) continue;
    for (const p4src::RegisterActionDecl& a : c.register_actions) {
      const std::string item = c.name + "." + a.name;
      const auto bind = checked.bind_register_action(item);
      if (!bind) {
        report.Add("differential", "register action " + item, Status::kMismatch, "no model function bound to it (" + a.loc.str() + ")");
        ++sum.failures;
        continue;
      }
      try {
        DiffRegisterAction(prog, c, a, *bind, inputs, rng, sum, report);
      } catch (const p4src::ReadError& e) {
        report.Add("differential", "register action " + item, Status::kMismatch, std::string("cannot evaluate: ") + e.what());
        ++sum.failures;
      }
    }
  }
  for (const auto& t : model.tables) {
    const std::string item = t.control + "." + t.name;
    if (!manifest.at("tables").contains(item)) continue;  // reported by the declaration check
    const json& table = manifest.at("tables").at(item);
    const json* entries = nullptr;
    if (t.controller_entries && manifest.at("controller_entries").contains(item))
      entries = &manifest.at("controller_entries").at(item).at("entries");
    else if (table.contains("const_entries"))
      entries = &table.at("const_entries");
    const auto bind = checked.bind_table(item);
    if (!entries || !bind) {
      report.Add("differential", "table " + item, Status::kMismatch, !bind ? "no model lookup bound to it" : "no upstream entries");
      ++sum.failures;
      continue;
    }
    DiffTable(item, table, *entries, *bind, inputs, rng, sum, report);
  }
  if (const auto pipeline = checked.bind_pipeline ? checked.bind_pipeline() : std::nullopt) {
    for (const auto& variant : pipeline->variants) {
      try {
        // The variant is the program read again with its #defines overridden.
        const p4src::Program variant_prog =
            variant.defines.empty() ? prog : p4src::ReadProgram(source_root, model.main_file, variant.defines);
        DiffPipeline(variant_prog, *pipeline, variant, std::max<uint64_t>(1000, inputs / 20), rng, sum, report);
      } catch (const p4src::ReadError& e) {
        report.Add("differential", "pipeline " + pipeline->control + " (" + variant.name + ")", Status::kMismatch,
                   std::string("cannot evaluate: ") + e.what());
        ++sum.failures;
      }
    }
  }
  return sum;
}

}  // namespace inasim::p4tools
