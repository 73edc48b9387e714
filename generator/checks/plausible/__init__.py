"""Physical bounds (`plausible.*`): figures no real run can produce. An epbench result against
the round trips and the window it journaled (`round_trip`) and the fastest inter-token gap in
its journal (`fastest_gap`); an imported result's figures against each other (`imported`).
"""
