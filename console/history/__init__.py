"""History pages of the operator console: usage and capacity over time, drawn from the
change log, and the "what changed here" timeline (reads.py, words.py, chart.py, pages.py)."""
