"""Network faults.

A TCP proxy that injects latency, resets, refusals, blackholes and half-open connections
(:mod:`.fault_proxy`).
"""
