"""The simulator: a numpy executor for StableHLO (+ Shardy) programs and a
simulated mesh of devices whose collectives move data between their buffers.

    Program(module, filename).run("main", args)       # one device
    run_on_devices(program, [[DeviceRun(fn, args), ...]])  # replicas x partitions
    simulate_text(text, filename, seed=0)              # sharded vs unsharded run

Heavy modules load on first use, so `import sdylog.simulate` stays cheap.
"""
from __future__ import annotations

__all__ = ["Program", "DeviceRuntime", "CollectiveStats", "DeviceRun", "run_on_devices",
           "simulate_text", "interpret_text"]

_WHERE = {
    "Program": "sdylog.simulate.program", "DeviceRuntime": "sdylog.simulate.program",
    "CollectiveStats": "sdylog.simulate.mesh", "DeviceRun": "sdylog.simulate.mesh",
    "run_on_devices": "sdylog.simulate.mesh", "simulate_text": "sdylog.simulate.simulate",
    "interpret_text": "sdylog.simulate.interpret",
}


def __getattr__(name):
    if name in _WHERE:
        import importlib
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(name)
