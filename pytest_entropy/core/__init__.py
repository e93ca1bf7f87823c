"""The pure library: metric, hashing, records. No I/O, no pytest, no clocks.

Every function here is deterministic: the same inputs give the same bytes.
"""
