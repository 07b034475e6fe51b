"""The allocations app's operator pages: dashboard, usages, status, consumers."""
