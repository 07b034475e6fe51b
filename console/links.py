"""Links to the operator pages, for tables of many rows."""
from typing import NamedTuple

from django.urls import reverse

_ARGUMENT = "__argument__"


class RowUrl(NamedTuple):
    """The URL of a page that takes one argument, as the text before and after it."""

    before: str
    after: str

    # templates read .before and .after; without this they would call it with no argument
    do_not_call_in_templates = True

    def __call__(self, argument):
        """The URL for `argument` (for rows built in Python)."""
        return self.before + argument + self.after


def row_url(name):
    """RowUrl of page `name`, whose one argument is a uuid or a resource class or trait
    name (characters a URL keeps as they are): a template writes before, argument and
    after on each row, so a page of many rows calls reverse() once, not once per row."""
    before, after = reverse(name, args=[_ARGUMENT]).split(_ARGUMENT)
    return RowUrl(before, after)
