"""The tree guard (providers/services/tree_lock.py): one row every provider-tree write
updates first, in place of PostgreSQL's advisory lock, so that tree writes conflict on
every database, and on every node of a Galera cluster. Not a model: a test's flush of the
models' tables leaves it (and its row) alone, as it does the topology token."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("providers", "0007_inventories_move_the_topology_token"),
    ]

    operations = [
        migrations.RunSQL(
            ["CREATE TABLE tree_guard (id integer PRIMARY KEY, writes bigint NOT NULL)",
             "INSERT INTO tree_guard (id, writes) VALUES (1, 0)"],
            ["DROP TABLE tree_guard"]),
    ]
