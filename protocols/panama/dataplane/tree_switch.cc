#include "protocols/panama/dataplane/tree_switch.h"

#include "common/json_text.h"
#include "p4model/common/address_text.h"
#include "p4model/common/frame.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>
#include <utility>

namespace inasim::p4::panama {

namespace {

[[noreturn]] void Fail(const std::string& m) { throw std::invalid_argument("panama config: " + m); }

const std::set<std::string> kRouteKeys = {"parent_port", "children"};
const std::set<std::string> kChildKeys = {"port", "ip", "mac"};

TreeRoute::Child ChildFromJson(const nlohmann::json& x, const std::string& path) {
  if (!x.is_object()) Fail(path + ": must be an object");
  util::CheckKnownKeys(x, kChildKeys, path);
  if (!x.contains("port")) Fail(path + ": needs \"port\"");
  TreeRoute::Child c;
  c.port = util::UnsignedField<uint16_t>(x, "port", path, 0, 0, kMaxPorts - 1);
  if (x.contains("ip") != x.contains("mac")) Fail(path + ": a host child needs both \"ip\" and \"mac\"");
  if (x.contains("ip")) {
    if (!ParseIpv4Text(util::StringField(x, "ip", path), c.host_ip) || c.host_ip == 0)
      Fail(path + ".ip: must be an IPv4 address like \"10.0.0.1\" (not 0.0.0.0)");
    if (!ParseMacText(util::StringField(x, "mac", path), c.host_mac))
      Fail(path + ".mac: must be a MAC address like \"02:00:0a:00:00:01\"");
  }
  return c;
}

TreeRoute RouteFromJson(const nlohmann::json& x, const std::string& path) {
  if (!x.is_object()) Fail(path + ": must be an object");
  util::CheckKnownKeys(x, kRouteKeys, path);
  TreeRoute r;
  if (x.contains("parent_port")) {
    const nlohmann::json& p = x["parent_port"];
    if (p.is_number_integer() && p.get<int64_t>() == -1) r.parent_port = -1;
    else r.parent_port = static_cast<int32_t>(util::CheckedUnsigned(p, path + ".parent_port", 0, kMaxPorts - 1));
  }
  if (x.contains("children")) {
    if (!x["children"].is_array()) Fail(path + ".children: must be an array");
    for (size_t i = 0; i < x["children"].size(); ++i)
      r.children.push_back(ChildFromJson(x["children"][i], path + ".children[" + std::to_string(i) + "]"));
  }
  return r;
}

}  // namespace

void TreeSwitchConfig::Validate() const {
  accelerator.Validate();
  if (routes.size() > accelerator.jobs.size()) Fail("tree routes for more jobs than installed");
  for (size_t j = 0; j < routes.size(); ++j) {
    const PanamaJob& job = accelerator.jobs[j];
    const std::string name = "job " + std::to_string(job.jid);
    if (routes[j].size() > job.num_trees) Fail(name + ": routes for more trees than it has");
    for (size_t t = 0; t < routes[j].size(); ++t) {
      const TreeRoute& r = routes[j][t];
      const std::string where = name + " tree " + std::to_string(t);
      if (r.parent_port >= static_cast<int32_t>(accelerator.num_ports) || r.parent_port < -1)
        Fail(where + ": parent port " + std::to_string(r.parent_port) + " >= num_ports");
      for (const TreeRoute::Child& c : r.children)
        if (c.port >= accelerator.num_ports || static_cast<int32_t>(c.port) == r.parent_port)
          Fail(where + ": bad child port " + std::to_string(c.port));
    }
  }
}

bool TreeSwitchConfig::HasRoutes(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return false;  // FromJson of the plain accelerator reports it
  }
  if (!j.is_object() || !j.contains("jobs") || !j["jobs"].is_array()) return false;
  for (const nlohmann::json& job : j["jobs"])
    if (job.is_object() && job.contains("tree_routes")) return true;
  return false;
}

TreeSwitchConfig TreeSwitchConfig::FromJson(const std::string& text) {
  nlohmann::json j;
  try {
    j = util::ParseStrictJson(text, "");
  } catch (const nlohmann::json::exception& e) {
    Fail(std::string("bad JSON: ") + e.what());
  } catch (const std::invalid_argument& e) {
    Fail(e.what());
  }
  if (!j.is_object()) Fail("not a JSON object");
  TreeSwitchConfig c;
  try {
    if (j.contains("jobs") && j["jobs"].is_array()) {
      for (size_t i = 0; i < j["jobs"].size(); ++i) {
        nlohmann::json& job = j["jobs"][i];
        c.routes.emplace_back();
        if (!job.is_object() || !job.contains("tree_routes")) continue;
        const std::string path = "jobs[" + std::to_string(i) + "].tree_routes";
        if (!job["tree_routes"].is_array()) Fail(path + ": must be an array (one entry per TID)");
        for (size_t t = 0; t < job["tree_routes"].size(); ++t)
          c.routes.back().push_back(RouteFromJson(job["tree_routes"][t], path + "[" + std::to_string(t) + "]"));
        job.erase("tree_routes");
      }
    }
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    if (m.rfind("panama config: ", 0) == 0) throw;
    Fail(m);
  }
  c.accelerator = PanamaConfig::FromJson(j.dump());  // the rest: the accelerator's own keys
  c.Validate();
  return c;
}

PanamaTreeSwitch::PanamaTreeSwitch(TreeSwitchConfig config)
    : accelerator_((config.Validate(), std::move(config.accelerator))) {
  for (size_t j = 0; j < accelerator_.config().jobs.size(); ++j) {
    jids_.push_back(accelerator_.config().jobs[j].jid);
    AddRoutes(j < config.routes.size() ? config.routes[j] : std::vector<TreeRoute>{});
  }
}

void PanamaTreeSwitch::AddJob(const PanamaJob& job, std::vector<TreeRoute> routes) {
  TreeSwitchConfig check{accelerator_.config(), {}};
  check.accelerator.jobs.push_back(job);
  check.routes.resize(check.accelerator.jobs.size());
  check.routes.back() = routes;
  check.Validate();
  accelerator_.AddJob(job);
  jids_.push_back(job.jid);
  AddRoutes(routes);
}

void PanamaTreeSwitch::AddRoutes(const std::vector<TreeRoute>& routes) {
  std::vector<Steering> job;
  for (const TreeRoute& r : routes) {
    Steering s;
    s.parent_port = r.parent_port;
    s.children = r.children;
    if (!r.children.empty()) {
      s.is_child.assign(accelerator_.config().num_ports, 0);
      for (const TreeRoute::Child& c : r.children) s.is_child[c.port] = 1;
    }
    job.push_back(std::move(s));
  }
  routes_.push_back(std::move(job));
}

void PanamaTreeSwitch::Process(uint16_t ingress_port, inasim::Span<const uint8_t> frame, Picoseconds now,
                               Emitter& out) {
  out_ = &out;
  ingress_ = ingress_port;
  accelerator_.Process(ingress_port, frame, now, *this);
  out_ = nullptr;
}

void PanamaTreeSwitch::Emit(inasim::Span<const uint8_t> frame, uint16_t port, Picoseconds latency) {
  out_->Emit(frame, port, latency);
}

void PanamaTreeSwitch::EmitMulticast(inasim::Span<const uint8_t> frame, inasim::Span<const uint16_t> ports,
                                     Picoseconds latency) {
  out_->EmitMulticast(frame, ports, latency);
}

const PanamaTreeSwitch::Steering* PanamaTreeSwitch::SteeringOf(inasim::Span<const uint8_t> frame,
                                                               const FrameView& v) const {
  const size_t hdr = v.l4_payload_offset;
  if (!v.l4 || v.protocol != kIpProtoUdp || frame.size() < hdr + kPanamaHeaderBytes) return nullptr;
  const auto job = std::find(jids_.begin(), jids_.end(), LoadBe16(frame.data() + hdr + kOffJid)) - jids_.begin();
  if (static_cast<size_t>(job) == jids_.size()) return nullptr;
  const uint8_t tid = frame.data()[hdr + kOffTid];
  if (tid >= routes_[job].size() || routes_[job][tid].is_child.empty()) return nullptr;
  return &routes_[job][tid];
}

// A result (or a result passing down): up to the parent if it came from a
// child and this is not the root, else down to every child.
void PanamaTreeSwitch::EmitRouted(inasim::Span<const uint8_t> frame, Picoseconds latency) {
  const FrameView v = ParseFrame(frame.data(), frame.size(), static_cast<uint32_t>(frame.size()));
  const Steering* r = SteeringOf(frame, v);
  if (r == nullptr) {
    out_->EmitRouted(frame, latency);  // no job's tree here: the switch forwards it
    return;
  }
  const bool from_child = ingress_ < r->is_child.size() && r->is_child[ingress_];
  if (from_child && r->parent_port >= 0) {
    out_->Emit(frame, static_cast<uint16_t>(r->parent_port), latency);
    return;
  }
  if (!from_child && static_cast<int32_t>(ingress_) != r->parent_port) {
    out_->EmitRouted(frame, latency);  // not on this tree's path: plain forwarding
    return;
  }
  for (const TreeRoute::Child& c : r->children) {
    if (c.host_ip == 0) out_->Emit(frame, c.port, latency);
    else EmitToHost(frame, v, c, latency);
  }
}

void PanamaTreeSwitch::EmitToHost(inasim::Span<const uint8_t> frame, const FrameView& v, const TreeRoute::Child& c,
                                  Picoseconds latency) {
  scratch_.assign(frame.data(), frame.data() + frame.size());
  std::memcpy(scratch_.data(), c.host_mac.data(), 6);
  uint8_t* ip = scratch_.data() + kEthernetBytes;
  StoreBe32(ip + 16, c.host_ip);
  StoreBe16(ip + 10, 0);
  StoreBe16(ip + 10, Ipv4HeaderChecksum(ip, v.ip_header_bytes));
  out_->Emit(inasim::Span<const uint8_t>(scratch_.data(), scratch_.size()), c.port, latency);
}

}  // namespace inasim::p4::panama
