"""Capacity planning for the served recogniser: how many replicas of which config hold a load at a p95, and
how the autoscaler's rule copes with a day of traffic. It reads the benchmark's measured curves and the
HPA manifest; it imports nothing of Triton."""
