"""`sdylog facts FILE -o DIR`: the module's input relations as Soufflé .facts files."""
import os

import click

from sdylog.cli import reports_errors


@click.command()
@click.argument("file")
@click.option("-o", "--output", "out_dir", required=True, help="Folder for the NAME.facts files (made if missing).")
@click.option("--conservative-propagation", is_flag=True, help="Op sharding rules in conservative mode.")
@reports_errors
def facts(file, out_dir, conservative_propagation):
    """Write every input relation of rules/schema.dl for FILE ('-': stdin), and
    the configuration of a -sdy-propagation-pipeline run (run_flag,
    run_strategy), so `sdylog datalog rules/propagation.dl -F DIR` runs the rules."""
    from sdylog import outputs
    from sdylog.facts.extract import extract_facts
    from sdylog.facts.write import facts_file_names, facts_text, rows_text
    from sdylog.ir import load_module
    from sdylog.ir.module import display_name
    from sdylog.passes.propagation_pipeline import PIPELINE_PROPAGATION
    from sdylog.propagation.driver import PropagationOptions, run_facts

    run = run_facts(PropagationOptions(**PIPELINE_PROPAGATION, conservative=conservative_propagation))
    planned = {name: outputs.plan(os.path.join(out_dir, name), "-o", create_folder=True)
               for name in facts_file_names(run)}
    module = load_module(file)
    files = facts_text(extract_facts(module, display_name(file), conservative_propagation))
    files.update({f"{name}.facts": rows_text(rows) for name, rows in run.items()})
    outputs.write_all([(planned[name], text) for name, text in files.items()])
    click.echo(f"wrote {len(files)} relations to {out_dir}", err=True)
