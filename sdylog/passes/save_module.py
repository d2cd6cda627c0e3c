"""sdy-save-module: write the module as it is to
`dump-directory/NN.file-name.mlir` (Shardy's SaveModuleOpPass in
common/file_utils.cc; NN: `dump-index`, two digits, left out when negative).
Nothing without a directory. Pipelines put it between their steps for
debugging (`-sdy-export-pipeline='dump-directory=DIR'`)."""
from __future__ import annotations

import os

from sdylog import outputs
from sdylog.ir import print_module
from sdylog.passes.census import PRESERVED


def run(module, options: dict, ctx):
    directory = options["dump-directory"]
    if directory:
        name = options["file-name"]
        if options["dump-index"] >= 0:
            name = f"{options['dump-index']:02d}.{name}"
        path = os.path.join(directory, name + ".mlir")
        outputs.write_all([(outputs.plan(path, "dump-directory", create_folder=True), print_module(module))])
    return PRESERVED
