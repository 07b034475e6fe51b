"""What every admin page of the project's models shares."""
from django.contrib.admin.options import IncorrectLookupParameters
from django.db import DataError


class QueryStringLookupsMixin:
    """A changelist's lookup from the query string (`?parent=…`, `?traits=…`) that the
    database cannot compare, such as an id past 64 bits (SQLite's driver refuses it
    before asking), is Django's "invalid lookup" answer (`?e=1`), as `?parent=abc` is,
    never a 500."""

    def get_changelist_instance(self, request):
        try:
            return super().get_changelist_instance(request)
        except (OverflowError, DataError) as exc:
            raise IncorrectLookupParameters(exc) from exc
