# Data mining flow sizes (the "VL2" or "data mining" workload).
#
# Source: A. Greenberg et al., "VL2: A Scalable and Flexible Data Center
# Network", SIGCOMM 2009, Fig. 2 (flow sizes in a data-mining cluster).
# Points: the digitisation used by the pFabric simulation scripts (Alizadeh et
# al., "pFabric: Minimal Near-Optimal Datacenter Transport", SIGCOMM 2013) and
# reused by later work of that era (PANAMA and others): sizes in 1460-byte
# packets, cumulative probability, interpolated linearly.
#
# Mean (FlowSizeCdf::Mean, exact for this piecewise-linear CDF):
#   5116.6 packets = 7,470,236 bytes (about 7.47 MB).
# Half the flows are a single packet (1,460 bytes), yet 1 % of flows, between
# 66,667 and 666,667 packets (97 MB to 973 MB), carry about 72 % of the bytes.
#
# Format: see src/congestion/flow_size_cdf.h. This file is compiled into the
# binary (src/CMakeLists.txt); edit it and rebuild.

unit 1460

# packets  cdf
1       0
1       0.5
2       0.6
3       0.7
7       0.8
267     0.9
2107    0.95
66667   0.99
666667  1
