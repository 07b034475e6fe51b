"""Orders the operator pages share."""
import re


def name_order(name):
    """Sort key of names: by name, numbers by value (ens2 before ens10, cmp-9 before
    cmp-10)."""
    return [int(part) if index % 2 else part
            for index, part in enumerate(re.split(r"(\d+)", name))]
