"""The indexes of the migrated schema: each column set indexed once.

A second index on the same columns is never chosen over the first: it only takes space
and one more update on every write of those columns (resource_providers.root_id had two
until migration providers 0005)."""
from collections import Counter

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

TABLES = ["resource_providers", "inventories", "allocations", "resource_provider_traits",
          "resource_provider_aggregates", "consumers", "traits", "resource_classes",
          "placement_aggregates", "projects", "users", "consumer_types", "change_records"]


@pytest.mark.parametrize("table", TABLES)
def test_no_column_set_is_indexed_twice(table):
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    # unique constraints and plain indexes both create an index; `orders` tells a
    # varchar_pattern_ops LIKE index from the plain one on PostgreSQL by its opclass
    indexed = Counter(
        (tuple(found["columns"]), tuple(found.get("orders") or ()), found.get("type"))
        for found in constraints.values()
        if (found["index"] or found["unique"] or found["primary_key"])
        and found["columns"] and not found.get("definition"))
    twice = {columns: n for columns, n in indexed.items() if n > 1}
    assert twice == {}, f"{table}: {twice}"


def test_root_is_indexed():
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, "resource_providers")
    assert any(found["index"] and found["columns"] == ["root_id"]
               for found in constraints.values())
