"""Trying a write without keeping it: whether the services would refuse it.

The admin asks this before it offers a delete, the UI before it asks to
confirm an inventory change: a change the service refuses is shown as its
refusal instead of a confirmation the user could not act on.
"""
from django.db import transaction

from foundation.domain_errors import DomainError


class _Undo(Exception):
    """Rolls back the transaction of a write that was only tried."""


def refusal(write):
    """Run `write()` in a transaction that is always rolled back.

    Returns the service error it raised (a DomainError), or None when
    the services would accept it. Other exceptions propagate.
    """
    try:
        with transaction.atomic():
            write()
            raise _Undo
    except _Undo:
        return None
    except DomainError as exc:
        return exc
