"""python -m bench <benchmark> [options]: run one of the benchmarks.

The benchmarks: candidates, devices, scheduler, ui, replicas, placement_db,
placement_import.

Sets Django up with placement_site.settings (DATABASE_URL and the rest as the service
reads them), then runs the named benchmark (see its module's docstring, or --help).
"""
import argparse
import importlib
import os
import sys

from bench import BenchError

BENCHMARKS = ("candidates", "devices", "scheduler", "ui", "replicas", "placement_db",
              "placement_import")


def parser():
    """The command line: one sub-command per module of BENCHMARKS."""
    top = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    names = top.add_subparsers(dest="benchmark", metavar="<benchmark>", required=True)
    for name in BENCHMARKS:
        module = importlib.import_module(f"bench.{name}")
        sub = names.add_parser(name, help=module.HELP, description=module.__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return top


def run(argv, out):
    """Run the benchmark argv names, printing to out (Django already set up)."""
    options = parser().parse_args(argv)
    options.run(options, out)


def main(argv=None):
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placement_site.settings")
    import django
    django.setup()
    try:
        run(sys.argv[1:] if argv is None else argv, sys.stdout)
    except BenchError as exc:
        print(f"python -m bench: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
