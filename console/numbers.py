"""How the operator pages write amounts, in one place.

Thousands separators (87,539,712); beside the raw amount of a class that has a
size unit, the same size in the largest binary unit it reaches (MEMORY_MB
87,539,712 is 83.5 TiB); and numbers too long to read (a capacity under an
allocation ratio of 3.4e38 has 39 digits) in short form, which the pages show
with the exact value in a tooltip.
"""
import math

# Classes whose amounts are sizes: bytes in one unit of the class.
SIZE_UNITS = {"MEMORY_MB": 2 ** 20, "DISK_GB": 2 ** 30}
BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")
LONG = 10 ** 15   # from here on a number prints in short form: 3.4e38


def is_long(value):
    return isinstance(value, (int, float)) and math.isfinite(value) and abs(value) >= LONG


def number(value):
    """1234567 -> '1,234,567'; 1.5 -> '1.5'; 3.4e38 -> '3.4e38'; None -> ''."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if not math.isfinite(value):
        return str(value)
    if is_long(value):
        return f"{value:.2g}".replace("e+", "e")
    return f"{value:,}"


def percent(value):
    """75.04 -> '75.0%' (one decimal, as the capacity table shows); None -> ''."""
    if value is None:
        return ""
    return f"{number(round(value, 1))}%"


def size(resource_class, value):
    """The amount `value` of `resource_class` as a size in the largest binary unit it
    reaches ('83.5 TiB'), or '' when the class has no size unit or that unit is the
    class's own (512 MEMORY_MB is just 512 MiB)."""
    unit = SIZE_UNITS.get(resource_class)
    if unit is None or not isinstance(value, (int, float)) or is_long(value) or value <= 0:
        return ""
    amount = value * unit
    power = min(int(math.log(amount, 1024)), len(BINARY_UNITS) - 1)
    if 1024 ** power <= unit:
        return ""
    scaled = amount / 1024 ** power
    return f"{scaled:.1f} {BINARY_UNITS[power]}".replace(".0 ", " ")
