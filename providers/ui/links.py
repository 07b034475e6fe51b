"""Links to the operator pages, for tables of many rows."""
from django.urls import reverse


def uuid_page_prefix(name):
    """The URL of page `name` (a page of one provider or consumer, by uuid) up to the
    uuid: a template writes prefix, uuid and "/" per row, so a page of many rows
    calls reverse() once, not once per row."""
    return reverse(name, args=["-"])[:-2]
