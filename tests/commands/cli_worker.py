"""Runs `sdylog` commands in a separate process, many per process (start-up
costs a second; a command costs milliseconds), for the bad-input suite and
the mutation property test: a crash of the process (a signal from the MLIR
bindings) is seen as the result of the command that caused it, and ends no
more than that process.

    with CliWorker() as w:
        r = w.run(["run", "m.mlir", "-o", "out.mlir"], files={"m.mlir": b"..."})
        r.exit_code, r.stdout, r.stderr, r.traceback, r.written

Each command runs in a fresh folder holding `files` (its current folder);
`written` lists what is there afterwards besides them.
"""
from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Result:
    exit_code: int | None       # None: the process died (signal in `crash`)
    stdout: str
    stderr: str
    traceback: str | None       # an exception that escaped the command (none should)
    written: list[str]          # files the command left in its folder, besides its inputs
    crash: str = ""


class CliWorker:
    def __init__(self):
        self.proc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen([sys.executable, "-u", __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)

    def run(self, args: list[str], files: dict[str, bytes] | None = None, stdin: bytes | None = None,
            env: dict[str, str] | None = None, timeout: float = 120) -> Result:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        request = {"args": [str(a) for a in args], "env": env or {},
                   "stdin": base64.b64encode(stdin).decode() if stdin is not None else None,
                   "files": {k: base64.b64encode(v).decode() for k, v in (files or {}).items()}}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        if not select.select([self.proc.stdout], [], [], timeout)[0]:
            self.proc.kill()                   # (a command that never ends: a hang is a failure too)
            self.proc.wait()
            self.proc = None
            return Result(None, "", "", None, [], crash=f"no answer in {timeout} s")
        line = self.proc.stdout.readline()
        if not line:                           # the process died on this command
            code = self.proc.wait()
            err = self.proc.stderr.read()
            self.proc = None
            return Result(None, "", "", None, [], crash=f"worker exit status {code}: {err[-2000:]}")
        return Result(**json.loads(line))

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(30)
        self.proc = None


def _serve() -> None:
    """The worker process: one JSON request a line in, one result a line out."""
    import shutil
    import tempfile
    import traceback

    from click.testing import CliRunner

    from sdylog.cli import main

    out = sys.stdout
    for line in sys.stdin:
        req = json.loads(line)
        folder = tempfile.mkdtemp(prefix="sdylog-cli-")
        inputs = set()
        for name, data in req["files"].items():
            p = Path(folder, name)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(base64.b64decode(data))
            inputs.add(name)
        here = os.getcwd()
        os.chdir(folder)
        try:
            stdin = base64.b64decode(req["stdin"]) if req["stdin"] is not None else None
            r = CliRunner().invoke(main, req["args"], input=stdin, env=req["env"] or None, prog_name="sdylog")
            tb = None
            if r.exception is not None and not isinstance(r.exception, SystemExit):
                tb = "".join(traceback.format_exception(r.exception))
            kept = inputs | {str(parent) for name in inputs for parent in Path(name).parents}
            written = sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*")
                             if str(p.relative_to(folder)) not in kept)
            result = {"exit_code": r.exit_code, "stdout": r.stdout, "stderr": r.stderr, "traceback": tb,
                      "written": written}
        finally:
            os.chdir(here)
            shutil.rmtree(folder, ignore_errors=True)
        out.write(json.dumps(result) + "\n")
        out.flush()


if __name__ == "__main__":
    _serve()
