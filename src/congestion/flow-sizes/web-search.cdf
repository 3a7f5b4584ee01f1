# Web search flow sizes (the "DCTCP" or "web search" workload).
#
# Source: M. Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, Fig. 4
# (background flows in a production web-search cluster).
# Points: the digitisation used by the pFabric simulation scripts (Alizadeh et
# al., "pFabric: Minimal Near-Optimal Datacenter Transport", SIGCOMM 2013) and
# reused by later work of that era (PANAMA and others): sizes in 1460-byte
# packets, cumulative probability, interpolated linearly.
#
# Mean (FlowSizeCdf::Mean, exact for this piecewise-linear CDF):
#   1140.98 packets = 1,665,830.8 bytes (about 1.67 MB).
# 15 % of flows are exactly 6 packets (8,760 bytes); the largest is 20,000
# packets (29.2 MB).
#
# Format: see src/congestion/flow_size_cdf.h. This file is compiled into the
# binary (src/CMakeLists.txt); edit it and rebuild.

unit 1460

# packets  cdf
6      0
6      0.15
13     0.2
19     0.3
33     0.4
53     0.53
133    0.6
667    0.7
1333   0.8
3333   0.9
6667   0.97
20000  1
