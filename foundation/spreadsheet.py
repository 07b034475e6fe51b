"""CSV exports of the operator UI: cells a spreadsheet would not run as formulas."""

# A spreadsheet runs a cell starting with one of these as a formula; provider names, project
# and user ids are whatever API clients sent.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """A CSV cell, text quoted with ' when a spreadsheet would run it (other values as is)."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_START) else value
