"""Entry point for `python -m tritoninspect` and the `tritoninspect` console script."""

import signal
import sys


def main() -> None:
    """Run the CLI. Ctrl-C while Python imports it (typer, rich: the first few hundred milliseconds) ends the
    run as Ctrl-C does later, with one `error: interrupted` line (the JSON envelope with --json) and exit 130,
    not with Python's traceback: it is held until the CLI can say so. A SIGINT the parent ignores (a job
    started in the background) stays ignored."""
    held: list[int] = []
    catch = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if catch:
        signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    from tritoninspect.cli import main as cli_main

    if catch:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    cli_main(interrupted=bool(held))


if __name__ == "__main__":
    sys.exit(main())
