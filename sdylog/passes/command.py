"""`sdylog opt FILE [sdy_opt flags...] [-o OUT]`."""
import click

from sdylog.cli import reports_errors


class OptCommand(click.Command):
    """Its help lists every pass of the PASSES table with its summary and options."""

    def format_epilog(self, ctx, formatter):
        import textwrap

        from sdylog.passes import PASSES, options_text
        width = max(formatter.width or 80, 60) - 6

        def wrapped(text, first, rest):
            return textwrap.fill(text, width, initial_indent=first, subsequent_indent=rest,
                                 break_on_hyphens=False, break_long_words=False)

        lines = ["", "Passes (options: -PASS='k=v k2=v2' or -PASS{k=v k2=v2}):"]
        for name, info in PASSES.items():
            lines.append(f"  -{name}")
            lines.append(wrapped(info.summary, "      ", "      "))
            if info.options:
                lines.append(wrapped(options_text(info), "      options: ", " " * 15))
        formatter.write("\n".join(lines) + "\n")


@click.command(cls=OptCommand, context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False,
                                                 "help_option_names": ["--help"]})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@reports_errors
def opt(args):
    """Run sdylog's own passes (sdylog/passes), named by sdy_opt's flags, and
    print the module as sdy_opt does. No Shardy pass runs.

    \b
    sdylog opt FILE -sdy-basic-propagate
    sdylog opt FILE -sdy-basic-propagate='conservative-propagation=true' -o OUT
    sdylog opt FILE -sdy-basic-propagate{conservative-propagation=true}
    sdylog opt FILE --pass-pipeline='builtin.module(sdy-import-pipeline,func.func(sdy-close-shardings))'

    --pass-pipeline is read by sdylog (passes/driver.py), each name mapped
    to sdylog's pass of that flag; MLIR's pass manager is never used.
    FILE may be '-' for stdin. Flags: -o OUT, -split-input-file,
    -allow-unregistered-dialect; -verify-diagnostics, -mlir-print-debuginfo
    and -mlir-disable-threading are accepted and change nothing.
    """
    from sdylog.passes.driver import opt_main
    opt_main(list(args))
