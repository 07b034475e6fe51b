"""The local accounts' groups the console ships (console/door.py): readers see, operators
also write. Made again after every migrate, so that new models' permissions join them."""
from django.contrib.auth.models import Group, Permission

READERS = "Placement readers"
OPERATORS = "Placement operators"
DOMAIN_APPS = ("providers", "allocations")


def ensure_groups(using="default"):
    """Create or complete the two groups: readers get every view permission of the domain
    apps, operators every permission of them."""
    permissions = Permission.objects.using(using).filter(
        content_type__app_label__in=DOMAIN_APPS)
    readers, _ = Group.objects.using(using).get_or_create(name=READERS)
    operators, _ = Group.objects.using(using).get_or_create(name=OPERATORS)
    readers.permissions.add(*permissions.filter(codename__startswith="view_"))
    operators.permissions.add(*permissions)
