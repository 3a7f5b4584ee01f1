-- Wireshark / tshark dissectors for INA-Sim's four in-network aggregation
-- protocols, as the simulator puts them on the wire (each protocol's
-- dataplane README gives the layout):
--   SwitchML: UDP to 0xbee0..0xbeef (and the switch's replies from it):
--     switchml_h 8 B, exponents 2 B, int32 data (p4app-switchML headers.p4:72)
--   Canary:   UDP port 45501: 19-byte header, int32 data
--             (protocols/canary/dataplane/README.md "Encapsulation")
--   PANAMA:   IPv4 DSCP 56 + UDP: 14-byte header, fp32 gradients
--             (protocols/panama/dataplane/types.h)
--   P4SGD:    UDP port 20050 (the "udp" carriage): the 64-byte load header
--             (RC4ML/P4FPGA p4fpga.p4:103-125; paper-mode flags in byte 0)
-- Use: tshark -X lua_script:tools/inasim.lua -r out/run/pcap/link-0-h0-s0.pcap -V

local function data_lanes(tree, buf, from, count_label, kind)
  local n = math.floor((buf:len() - from) / 4)
  if n <= 0 then return end
  local sub = tree:add(buf(from, n * 4), string.format("%s: %d values", count_label, n))
  for i = 0, n - 1 do
    local lane = buf(from + 4 * i, 4)
    if kind == "float" then
      sub:add(lane, string.format("[%d] %g", i, lane:float()))
    else
      sub:add(lane, string.format("[%d] %d", i, lane:int()))
    end
  end
end

-- SwitchML ---------------------------------------------------------------------
local switchml = Proto("switchml", "SwitchML")
local sf = switchml.fields
sf.msg_type = ProtoField.uint8("switchml.msg_type", "Message type", base.DEC, nil, 0xf0)
sf.unused = ProtoField.uint8("switchml.unused", "Unused", base.DEC, nil, 0x08)
sf.size = ProtoField.uint8("switchml.size", "Size", base.DEC,
  { [0] = "128 B", [1] = "256 B", [2] = "512 B", [3] = "1024 B" }, 0x07)
sf.job = ProtoField.uint8("switchml.job_number", "Job number", base.DEC)
sf.tsi = ProtoField.uint32("switchml.tsi", "TSI", base.HEX)
sf.pool_index = ProtoField.uint16("switchml.pool_index", "Pool index", base.HEX)
sf.set = ProtoField.uint16("switchml.set", "Set", base.DEC, nil, 0x8000)
sf.slot = ProtoField.uint16("switchml.slot", "Slot", base.DEC, nil, 0x3fff)
sf.e0 = ProtoField.int8("switchml.e0", "Exponent 0", base.DEC)
sf.e1 = ProtoField.int8("switchml.e1", "Exponent 1", base.DEC)
sf.first = ProtoField.int32("switchml.first_value", "First value", base.DEC)

function switchml.dissector(buf, pinfo, tree)
  if buf:len() < 10 then return 0 end
  pinfo.cols.protocol = "SwitchML"
  local t = tree:add(switchml, buf())
  t:add(sf.msg_type, buf(0, 1))
  t:add(sf.unused, buf(0, 1))
  t:add(sf.size, buf(0, 1))
  t:add(sf.job, buf(1, 1))
  t:add(sf.tsi, buf(2, 4))
  t:add(sf.pool_index, buf(6, 2))
  t:add(sf.set, buf(6, 2))
  t:add(sf.slot, buf(6, 2))
  t:add(sf.e0, buf(8, 1))
  t:add(sf.e1, buf(9, 1))
  if buf:len() >= 14 then t:add(sf.first, buf(10, 4)) end
  data_lanes(t, buf, 10, "Data", "int")
  pinfo.cols.info = string.format("SwitchML type %d job %d pool %d", buf(0, 1):bitfield(0, 4),
    buf(1, 1):uint(), buf(6, 2):uint())
  return buf:len()
end

-- Canary -------------------------------------------------------------------------
local canary = Proto("canary", "Canary")
local cf = canary.fields
cf.destination = ProtoField.ipv4("canary.destination", "Destination (leader)")
cf.id = ProtoField.uint32("canary.id", "Id", base.HEX)
cf.counter = ProtoField.uint16("canary.counter", "Counter", base.DEC)
cf.hosts = ProtoField.uint16("canary.hosts", "Hosts", base.DEC)
cf.children = ProtoField.uint32("canary.children", "Children", base.DEC)
cf.switch_address = ProtoField.uint16("canary.switch_address", "Switch address", base.DEC)
cf.bypass = ProtoField.uint8("canary.bypass", "Bypass", base.DEC, nil, 0x80)
cf.multicast = ProtoField.uint8("canary.multicast", "Multicast", base.DEC, nil, 0x40)
cf.first = ProtoField.int32("canary.first_value", "First value", base.DEC)

function canary.dissector(buf, pinfo, tree)
  if buf:len() < 19 then return 0 end
  pinfo.cols.protocol = "Canary"
  local t = tree:add(canary, buf())
  t:add(cf.destination, buf(0, 4))
  t:add(cf.id, buf(4, 4))
  t:add(cf.counter, buf(8, 2))
  t:add(cf.hosts, buf(10, 2))
  t:add(cf.children, buf(12, 4))
  t:add(cf.switch_address, buf(16, 2))
  t:add(cf.bypass, buf(18, 1))
  t:add(cf.multicast, buf(18, 1))
  if buf:len() >= 23 then t:add(cf.first, buf(19, 4)) end
  data_lanes(t, buf, 19, "Data", "int")
  pinfo.cols.info = string.format("Canary id 0x%08x counter %d/%d", buf(4, 4):uint(), buf(8, 2):uint(),
    buf(10, 2):uint())
  return buf:len()
end

-- PANAMA --------------------------------------------------------------------------
local panama = Proto("panama", "PANAMA")
local pf = panama.fields
pf.jid = ProtoField.uint16("panama.jid", "Job id", base.DEC)
pf.tid = ProtoField.uint8("panama.tid", "Tree id", base.DEC)
pf.fin = ProtoField.uint8("panama.fin", "FIN", base.DEC, nil, 0x80)
pf.vid = ProtoField.uint32("panama.vid", "Vector id", base.DEC)
pf.wnd_cap = ProtoField.uint16("panama.wnd_cap", "wnd_cap", base.DEC)
pf.first = ProtoField.float("panama.first_value", "First gradient")
local ip_dsfield = Field.new("ip.dsfield.dscp")

function panama.dissector(buf, pinfo, tree)
  if buf:len() < 14 then return 0 end
  pinfo.cols.protocol = "PANAMA"
  local t = tree:add(panama, buf())
  t:add(pf.jid, buf(0, 2))
  t:add(pf.tid, buf(2, 1))
  t:add(pf.fin, buf(3, 1))
  t:add(pf.vid, buf(4, 4))
  t:add(pf.wnd_cap, buf(8, 2))
  if buf:len() >= 18 then t:add(pf.first, buf(14, 4)) end
  data_lanes(t, buf, 14, "Gradients", "float")
  pinfo.cols.info = string.format("PANAMA job %d tree %d vid %d", buf(0, 2):uint(), buf(2, 1):uint(),
    buf(4, 4):uint())
  return buf:len()
end

-- Aggregation traffic is IPv4 DSCP 56 over UDP, on any port (panama §5 (1)).
local function panama_heuristic(buf, pinfo, tree)
  local dscp = ip_dsfield()
  if dscp == nil or dscp.value ~= 56 or buf:len() < 14 then return false end
  panama.dissector(buf, pinfo, tree)
  return true
end

-- P4SGD -----------------------------------------------------------------------------
local p4sgd = Proto("p4sgd", "P4SGD")
local gf = p4sgd.fields
gf.ack = ProtoField.uint8("p4sgd.ack", "Ack (paper mode)", base.DEC, nil, 0x80)
gf.ack_complete = ProtoField.uint8("p4sgd.ack_complete", "Ack complete (paper mode)", base.DEC, nil, 0x40)
gf.slot = ProtoField.uint8("p4sgd.slot", "Slot", base.DEC, nil, 0x01)
gf.index = ProtoField.uint16("p4sgd.index", "Index", base.DEC)
gf.seq_no = ProtoField.uint32("p4sgd.seq_no", "Sequence number", base.DEC)
gf.bitmap = ProtoField.uint32("p4sgd.bitmap", "Bitmap", base.HEX)
gf.map_state = ProtoField.uint32("p4sgd.map_state", "Map state", base.HEX)
gf.counter_state = ProtoField.uint32("p4sgd.counter_state", "Counter state", base.DEC)
gf.slot_state = ProtoField.uint8("p4sgd.slot_state", "Slot state", base.DEC, nil, 0x80)
gf.first = ProtoField.int32("p4sgd.value1", "value1", base.DEC)

function p4sgd.dissector(buf, pinfo, tree)
  if buf:len() < 64 then return 0 end
  pinfo.cols.protocol = "P4SGD"
  local t = tree:add(p4sgd, buf(0, 64))
  t:add(gf.ack, buf(0, 1))
  t:add(gf.ack_complete, buf(0, 1))
  t:add(gf.slot, buf(1, 1))
  t:add(gf.index, buf(2, 2))
  t:add(gf.seq_no, buf(4, 4))
  t:add(gf.bitmap, buf(8, 4))
  t:add(gf.map_state, buf(12, 4))
  t:add(gf.counter_state, buf(16, 4))
  t:add(gf.slot_state, buf(20, 1))
  t:add(gf.first, buf(32, 4))
  local values = t:add(buf(32, 32), "value1..value8")
  for i = 0, 7 do values:add(buf(32 + 4 * i, 4), string.format("value%d: %d", i + 1, buf(32 + 4 * i, 4):int())) end
  pinfo.cols.info = string.format("P4SGD index %d bitmap 0x%08x%s", buf(2, 2):uint(), buf(8, 4):uint(),
    buf(0, 1):bitfield(0, 1) == 1 and " ack" or "")
  return 64
end

local udp_port = DissectorTable.get("udp.port")
for port = 0xbee0, 0xbeef do udp_port:add(port, switchml) end
udp_port:add(45501, canary)
udp_port:add(20050, p4sgd)
panama:register_heuristic("udp", panama_heuristic)
