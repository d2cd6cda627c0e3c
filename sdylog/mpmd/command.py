"""`sdylog mpmd FILE [-o OUT] [--json MANIFEST] [--db OUT.duckdb] [--bf16-transfers nearest|truncate] [--assign NAME@DEV ...]`."""
import click

from sdylog.cli import reports_errors


def _checked(parse):
    """A click callback: the option's text read by `parse` (options.py) at
    once, so that a bad one is a usage error even where no MPMD run follows
    (`simulate` of an SPMD module); the text itself is kept."""
    def callback(ctx, param, value):
        from sdylog.errors import SdylogError
        try:
            parse(value)
        except SdylogError as e:
            message = e.message   # (without the option's name: click names it)
            for prefix in (f"{param.opts[0]}: ", f"{param.opts[0]} "):
                message = message.removeprefix(prefix)
            raise click.BadParameter(message) from None
        return value
    return callback


def _parse_assign(items):
    from sdylog.mpmd.options import parse_assign
    return parse_assign(items)


def _parse_recv_policy(text):
    from sdylog.mpmd.options import parse_recv_policy
    return parse_recv_policy(text)


def mpmd_options(fn):
    """The options `sdylog mpmd` and `sdylog simulate` share (MpmdOptions but the entry)."""
    for decorator in reversed((
            click.option("--assign", "assign", multiple=True, metavar="NAME@DEV", callback=_checked(_parse_assign),
                         help="Place the ops of named computation (or called function) NAME on device DEV."),
            click.option("--bf16-transfers", type=click.Choice(["off", "nearest", "truncate"]), default="off",
                         show_default=True, help="Send f32 tensors as bf16 (rounded to nearest even, or truncated "
                                                 "as TensorFlow does)."),
            click.option("--fanout", type=click.Choice(["star", "chain"]), default="star", show_default=True,
                         help="A value needed on several devices: sent from its origin to each, or forwarded "
                              "along them in device order."),
            click.option("--infer-transfers", type=click.Choice(["on", "off"]), default="on", show_default=True,
                         help="off: an unplaced op whose operands would have to travel is an error."),
            click.option("--merge-control", type=click.Choice(["on", "off"]), default="on", show_default=True,
                         help="A token sent with a data result of the same op rides with it."),
            click.option("--control-flow", type=click.Choice(["replicate", "atomic"]), default="replicate",
                         show_default=True, help="Loops and conditionals may span devices (each device runs its "
                                                 "own copy), or stay whole on one device."),
            click.option("--max-clones", type=click.IntRange(min=1), default=1, show_default=True,
                         help="An unplaced op used on up to this many devices is computed on each of them."),
            click.option("--devices", type=click.IntRange(min=1), default=None,
                         help="The module's device count (default: mhlo.num_partitions)."),
            click.option("--merge-small-transfers", "merge_small", is_flag=True,
                         help="Values of one element sent between the same two devices travel as one tensor."),
            click.option("--reduce-locally", is_flag=True,
                         help="A sum of unplaced adds over values of several devices: each device adds its own "
                              "first, only partial sums travel (re-associates float sums)."),
            click.option("--recv-policy", default="eager", show_default=True, metavar="eager|lazy|window:K",
                         callback=_checked(_parse_recv_policy),
                         help="Where recvs go: at their send's point (deadlock-free with any channels), just "
                              "before their first reader, or K ops before it (buffered channels only)."))):
        fn = decorator(fn)
    return fn


def options_from(assign, bf16_transfers, fanout, infer_transfers, merge_control, control_flow, max_clones,
                 devices, recv_policy="eager", merge_small=False, reduce_locally=False, entry=None):
    from sdylog.mpmd.options import MpmdOptions, parse_assign, parse_recv_policy
    policy, window = parse_recv_policy(recv_policy)
    return MpmdOptions(parse_assign(assign), bf16_transfers, fanout, infer_transfers == "on",
                       merge_control == "on", control_flow, max_clones, devices, entry, policy, window, merge_small,
                       reduce_locally=reduce_locally)


@click.command()
@click.argument("file")
@click.option("-o", "--output", help="Write the per-device module here instead of stdout.")
@click.option("--json", "manifest_path", metavar="MANIFEST",
              help="Write the manifest (devices, argument and result maps, channels) as JSON here ('-': stdout).")
@click.option("--db", help="Save every input and derived relation of the MPMD rules in this DuckDB file (each a "
                           "view named as the relation, names of values and ops beside their ids, as `sdylog query` "
                           "prints them; a table `relations` documenting them).")
@click.option("--quiet", "-q", is_flag=True, help="No report on stderr.")
@click.option("--entry", default=None, help="The function to partition (default: @main).")
@mpmd_options
@reports_errors
def mpmd(file, output, manifest_path, db, quiet, **kwargs):
    """Partition FILE into one program per device (`func.func @main.devN`),
    joined by stablehlo.send / recv, as TensorFlow's graph partitioner does:
    ops placed by maximal shardings (sdy or mhlo.sharding), `--assign` or
    the rules (where their results are used); one transfer per (value,
    destination); each device's sends and recvs in an order that cannot
    deadlock. Prints the module, and a report on stderr."""
    import json

    from sdylog import outputs
    from sdylog.ir.module import display_name, read_source
    from sdylog.mpmd.partition import partition_text

    if db == "-":
        raise click.BadParameter("a DuckDB file, not stdout", param_hint="--db")
    if manifest_path == "-" and (output or "-") == "-":
        raise click.BadParameter("stdout holds the module (no -o FILE): write one of them to a file",
                                 param_hint="--json -")
    module_out = outputs.plan(output or "-", "-o")
    manifest_out = outputs.plan(manifest_path, "--json") if manifest_path else None
    db_out = outputs.plan(db, "--db") if db else None
    outputs.check_distinct(module_out, manifest_out, db_out)
    options = options_from(**kwargs)
    part = partition_text(read_source(file), display_name(file), options)
    manifest = part.manifest()
    written = [(module_out, part.text())]
    if manifest_out:
        written.append((manifest_out, json.dumps(manifest, indent=1) + "\n"))
    if db_out:
        written.append((db_out, _database(file, options)))
    outputs.write_all(written)
    if not quiet:
        click.echo(report(part.plan, manifest), err=True)


def _database(file, options):
    """What writes the --db file: the rules' relations as `sdylog query FILE
    REL` reads them (mpmd_engine, an evaluation of its own: the partition's
    module is rewritten), with its names of values and ops."""
    from sdylog.commands.relations import DatabasePart, FactNames, run_programs, save_database
    from sdylog.mpmd.explain import mpmd_engine
    engine, facts, names, _, filename = mpmd_engine(file, options)
    handed = [engine, FactNames(facts, names, filename)]
    return lambda path: save_database(path, [DatabasePart(run_programs("mpmd"))], handed)


def report(plan, manifest: dict) -> str:
    channels = manifest["channels"]
    total = sum(c["bytes"] for c in channels)
    lines = [f"devices: {len(plan.devices)}; channels: {len(channels)} ({total} B when each carries one message); "
             f"cross-device edges: {plan.stats['cross_edges']}, transfers: {plan.stats['transfers']}"]
    for c in channels:
        lines.append(f"  channel {c['id']}: {c['value']} {c['src']} -> {c['dst']} {c['role']} "
                     f"{c['dtype']}{c['shape']} {c['bytes']} B")
    return "\n".join(lines)
