"""Bring an OpenStack Placement 16.0.0 database across, and a way back.

schema.py    Placement's schema (revision, tables, DDL per dialect)
dbapi.py     connections to a Placement database by URL (SQLite, MariaDB/MySQL, PostgreSQL)
problems.py  what Placement tolerates in its own data but we refuse or skip
content.py   order-independent fingerprints of what clients can see, for verification
importer.py  source -> our models, streamed, one transaction
exporter.py  our models -> an empty Placement database
generate.py  a large synthetic source, for the benchmark
"""


class UpstreamError(Exception):
    """A problem reported to the operator as one line (commands exit non-zero)."""
