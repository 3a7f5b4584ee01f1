# Every flow 4 MiB: PANAMA's "long flows" (sec. 7: >= 40 MB in the full-size
# runs; scaled with the gradients here) for the load-balancing experiment
# (Fig. 9). A first point with probability 1 is a mass at that size.
4194304 1
4194304 1
