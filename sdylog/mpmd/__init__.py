"""MPMD partitioning: a program whose ops are placed on devices becomes one
program per device, joined by sends and recvs (TensorFlow's graph
partitioner), every decision taken by the rules of rules/mpmd.dl.

    prepare.py   parse, inline calls and named computations (their names kept for --assign)
    facts.py     the placement facts beside the program facts (sdylog/facts)
    driver.py    facts in, the rules evaluated once, the decisions read back: a Plan
    emit.py      one `func.func @main.devN` per device with stablehlo.send / recv
    manifest.py  devices, argument and result maps, channels (`--json`)
    command.py   `sdylog mpmd`

`sdylog/simulate/mpmd.py` runs the per-device programs against each other.
"""
