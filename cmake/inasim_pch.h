// Precompiled for the ns-3 targets (src/ina/CMakeLists.txt, INASIM_PCH): the
// headers nearly every simulator, protocol-host and ns-3 test file parses,
// about 5 s per file otherwise on these machines. Only what already builds
// without it (every file still includes what it uses; INASIM_PCH=OFF checks).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4.h"
#include "ns3/net-device.h"
#include "ns3/node-container.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"
#include "ns3/udp-socket-factory.h"
