"""Benchmarks of the service, run from a checkout: ``python -m bench <name> [options]``.

Not part of the product (not in the wheel). Each module times one thing and exposes
HELP, add_arguments(parser) and run(options, out); bench/cloud.py builds the synthetic
clouds they all run on.
"""


class BenchError(Exception):
    """A benchmark cannot run or its run went wrong: a one-line message, a non-zero exit."""
