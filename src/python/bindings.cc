// The `_inasim` extension behind the Python package `inasim` (python/inasim).
// Documents cross as JSON text: the scenario parser, the runner and the
// results writer are the CLI's own, so Python sees the same errors, the same
// results.json and the same files.
#include "ina/build-paths.h"
#include "ina/runner.h"
#include "ina/traffic-links.h"
#include "ina/workload.h"
#include "ina/scenario.h"
#include "topology/topology.h"

#include "common/json_text.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "ina/version.h"

#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;
using nlohmann::json;

namespace {

json ParseDoc(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw inasim::ScenarioError(std::string("scenario: not valid JSON: ") + e.what());
  }
  if (const auto dup = inasim::util::FindDuplicateKey(text))  // as the CLI's LoadScenarioJson
    throw inasim::ScenarioError("scenario: " + dup->Describe());
  return doc;
}

inasim::Scenario Parse(const std::string& doc, const std::string& base_dir) {
  return inasim::ParseScenario(ParseDoc(doc), base_dir);
}

json TopologyJson(const inasim::topo::Topology& t) {
  json nodes = json::array(), links = json::array();
  for (uint32_t v = 0; v < t.num_vertices(); ++v) {
    const auto& n = t.node(v);
    nodes.push_back({{"id", v},
                     {"name", n.name},
                     {"kind", t.is_host(v) ? "host" : "switch"},
                     {"tier", n.tier},
                     {"pod", n.pod},
                     {"ports", t.ports(v).size()}});
  }
  for (uint32_t i = 0; i < t.links().size(); ++i) {
    const auto& l = t.links()[i];
    links.push_back({{"link", i},
                     {"a", l.a},
                     {"b", l.b},
                     {"port_a", l.port_a},
                     {"port_b", l.port_b},
                     {"rate_gbps", static_cast<double>(l.spec.rate_bps) / 1e9},
                     {"delay_ns", static_cast<double>(l.spec.delay_ps) / 1e3}});
  }
  return {{"description", t.description},
          {"hosts", t.num_hosts()},
          {"switches", t.num_switches()},
          {"nodes", nodes},
          {"links", links}};
}

json TreeJson(const inasim::topo::AggregationTree& tree) {
  json edges = json::array();
  for (uint32_t v : tree.vertices())
    if (v != tree.root) edges.push_back({{"child", v}, {"parent", tree.parent[v]}, {"port", tree.parent_port[v]}});
  return {{"root", tree.root}, {"hosts", tree.hosts}, {"depth", tree.depth()}, {"vertices", tree.vertices()},
          {"edges", edges}};
}

/// One tick of a Python run: Ctrl-C (Python's SIGINT handler only sets a
/// flag while C++ runs without the GIL) and the caller's progress callback.
/// Holds the first Python error, which stops the run.
struct PythonTick {
  py::object on_tick;
  std::optional<py::error_already_set> error;

  bool operator()(const inasim::ProgressSnapshot& p) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      error.emplace();  // fetches the KeyboardInterrupt (or the handler's exception)
      return false;
    }
    if (on_tick.is_none()) return true;
    try {
      py::dict d;
      d["sim_time_s"] = p.sim_time_s;
      d["fraction"] = p.fraction;
      d["events"] = p.events;
      d["elapsed_s"] = p.elapsed_s;
      d["eta_s"] = p.eta_s;
      on_tick(d);
    } catch (py::error_already_set& e) {
      error.emplace(std::move(e));
      return false;
    }
    return true;
  }
};

inasim::RunResult Run(const std::string& doc, const std::string& base_dir, bool progress, py::object on_tick) {
  const inasim::Scenario s = Parse(doc, base_dir);
  PythonTick tick{std::move(on_tick), std::nullopt};
  inasim::RunOptions o;
  o.progress = progress ? inasim::ProgressMode::kOn : inasim::ProgressMode::kOff;
  o.on_tick = [&tick](const inasim::ProgressSnapshot& p) { return tick(p); };
  bool interrupted = false;
  inasim::RunResult result;
  {
    py::gil_scoped_release unlocked;  // Python threads (progress bars) may run meanwhile
    try {
      result = inasim::RunScenario(s, o);
    } catch (const inasim::RunInterrupted&) {
      interrupted = true;
    }
  }
  if (interrupted) throw *tick.error;  // ns-3 is reset: the process can run again
  return result;
}

}  // namespace

PYBIND11_MODULE(_inasim, m) {
  m.doc() = "INA-Sim core (use the `inasim` package, not this module)";
  py::register_exception<inasim::ScenarioError>(m, "ScenarioError", PyExc_ValueError);

  m.def("version", [] { return std::string(inasim::Version()); });
  // The protocol registry (protocols/*/protocol.json), as JSON text.
  m.def("protocols", [] { return inasim::ProtocolsJson().dump(); });
  m.def("load", [](const std::string& path) { return inasim::LoadScenarioJson(path).dump(); });
  m.def("apply_set", [](const std::string& doc, const std::string& assignment) {
    json d = ParseDoc(doc);
    inasim::ApplyOverride(d, assignment);
    return d.dump();
  });
  m.def("validate", [](const std::string& doc, const std::string& base_dir) {
    return Parse(doc, base_dir).resolved.dump();
  });

  py::class_<inasim::RunResult>(m, "RunResult")
      .def_property_readonly("json_text", [](const inasim::RunResult& r) { return r.json.dump(); })
      .def_readonly("csv_names", &inasim::RunResult::csv_names)
      .def_readonly("csv_texts", &inasim::RunResult::csv_texts)
      .def_property_readonly("files",
                             [](const inasim::RunResult& r) {
                               py::dict d;
                               for (const auto& [name, bytes] : r.files) d[py::str(name)] = py::bytes(bytes);
                               return d;
                             })
      .def_readonly("correct", &inasim::RunResult::correct)
      .def_readonly("summary", &inasim::RunResult::summary)
      .def("write", [](const inasim::RunResult& r, const std::string& dir) { inasim::WriteResults(r, dir); });

  m.def("run", &Run, py::arg("doc"), py::arg("base_dir") = "", py::arg("progress") = false,
        py::arg("on_tick") = py::none(),
        "Runs a scenario. on_tick(dict) is called every 0.1-0.4 s of wall time with sim_time_s, fraction, "
        "events, elapsed_s, eta_s; an exception it raises, or a pending Ctrl-C, stops the run and is raised.");
  m.def("build_paths", [] { return std::string(inasim::BuildPythonPath()); },
        "\"<source>/python:<build>/python\": the package and extension directories this build belongs to.");

  m.def("traffic_links", [](const std::string& doc, const std::string& base_dir) {
    return inasim::TrafficLinksJson(Parse(doc, base_dir)).dump();
  });
  m.def("topology", [](const std::string& doc, const std::string& base_dir) {
    return TopologyJson(inasim::BuildTopology(Parse(doc, base_dir))).dump();
  });
  m.def("tree", [](const std::string& doc, const std::string& base_dir, uint32_t root, std::vector<uint32_t> hosts) {
    const auto t = inasim::BuildTopology(Parse(doc, base_dir));
    try {
      return TreeJson(inasim::topo::BuildTree(t, root, inasim::Span<const uint32_t>(hosts.data(), hosts.size()))).dump();
    } catch (const std::exception& e) {
      throw inasim::ScenarioError(std::string("tree: ") + e.what());
    }
  });
  m.def("trees", [](const std::string& doc, const std::string& base_dir, std::vector<uint32_t> hosts, uint32_t n) {
    const auto t = inasim::BuildTopology(Parse(doc, base_dir));
    json out = json::array();
    try {
      for (const auto& tree : inasim::topo::BuildTrees(t, inasim::Span<const uint32_t>(hosts.data(), hosts.size()), n))
        out.push_back(TreeJson(tree));
    } catch (const std::exception& e) {
      throw inasim::ScenarioError(std::string("trees: ") + e.what());
    }
    return out.dump();
  });
}
