"""`sdylog facts FILE -o DIR`: the module's input relations as Soufflé .facts files."""
import click

from sdylog.cli import reports_errors


@click.command()
@click.argument("file")
@click.option("-o", "--output", "out_dir", required=True, help="Folder for the NAME.facts files.")
@click.option("--conservative-propagation", is_flag=True, help="Op sharding rules in conservative mode.")
@reports_errors
def facts(file, out_dir, conservative_propagation):
    """Write every input relation of rules/schema.dl for FILE ('-': stdin), and
    the configuration of a -sdy-propagation-pipeline run (run_flag,
    run_strategy), so `sdylog datalog rules/propagation.dl -F DIR` runs the rules."""
    from sdylog.facts.extract import extract_facts
    from sdylog.propagation.driver import PropagationOptions, run_facts
    from sdylog.facts.write import write_facts_dir
    from sdylog.ir import load_module
    from sdylog.ir.module import display_name
    from sdylog.passes.propagation_pipeline import PIPELINE_PROPAGATION

    module = load_module(file)
    pipeline = PropagationOptions(**PIPELINE_PROPAGATION, conservative=conservative_propagation)
    written = write_facts_dir(extract_facts(module, display_name(file), conservative_propagation), out_dir,
                              run_facts(pipeline))
    click.echo(f"wrote {len(written)} relations to {out_dir}", err=True)
