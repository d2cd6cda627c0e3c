"""`sdylog facts FILE -o DIR`: the input relations propagation reads, as Soufflé .facts files."""
import os

import click

from sdylog.cli import reports_errors


@click.command()
@click.argument("file")
@click.option("-o", "--output", "out_dir", required=True, help="Folder for the NAME.facts files (made if missing).")
@click.option("--conservative-propagation", is_flag=True, help="Op sharding rules in conservative mode.")
@reports_errors
def facts(file, out_dir, conservative_propagation):
    """Write the input relations of rules/schema.dl as -sdy-propagation-pipeline's
    propagation reads them (after the import passes), and that run's
    configuration (run_flag, run_strategy), so that `sdylog datalog
    rules/propagation.dl -F DIR` derives what `sdylog run FILE` derives.
    FILE may be '-' for stdin."""
    from sdylog import outputs
    from sdylog.commands.pipeline import propagation_facts
    from sdylog.facts.write import facts_file_names, facts_text, rows_text

    planned = {name: outputs.plan(os.path.join(out_dir, name), "-o", create_folder=True)
               for name in facts_file_names(["run_flag", "run_strategy"])}
    facts, run = propagation_facts(file, conservative_propagation)
    files = facts_text(facts)
    files.update({f"{name}.facts": rows_text(rows) for name, rows in run.items()})
    outputs.write_all([(planned[name], text) for name, text in files.items()])
    click.echo(f"wrote {len(files)} relations to {out_dir}", err=True)
