"""One search box on every page (/ui/search/?q=): a provider by name, uuid or part of a
name, a consumer by uuid (or its beginning), an aggregate by uuid, a trait or a resource
class by part of its name. One match is opened; several are listed, a few of each kind.
A fixed number of queries whatever the size of the cloud."""
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from allocations.models import Consumer
from console.door import LIST_PROVIDERS, door
from foundation.uuids import canonical_uuid_or_none
from providers.models import Aggregate, ResourceClass, ResourceProvider, Trait

SHOWN = 20   # of each kind


def _links(q):
    """[(kind, label, url)] of what `q` names, a few of each kind."""
    canonical = canonical_uuid_or_none(q)
    found = []
    providers = (ResourceProvider.objects.filter(uuid=canonical) if canonical
                 else ResourceProvider.objects.filter(name__icontains=q).order_by("name"))
    found += [("provider", name, reverse("ui:provider", args=[uuid]))
              for uuid, name in providers.values_list("uuid", "name")[:SHOWN]]
    consumers = (Consumer.objects.filter(uuid=canonical) if canonical
                 else Consumer.objects.filter(uuid__startswith=q.lower()).order_by("uuid")
                 if len(q) >= 4 else Consumer.objects.none())
    found += [("consumer", uuid, reverse("ui:consumer", args=[uuid]))
              for uuid in consumers.values_list("uuid", flat=True)[:SHOWN]]
    if canonical:
        found += [("aggregate", uuid, f"{reverse('ui:providers')}?{urlencode({'member_of': uuid})}")
                  for uuid in Aggregate.objects.filter(uuid=canonical)
                  .values_list("uuid", flat=True)[:1]]
    else:
        found += [("trait", name, f"{reverse('ui:providers')}?{urlencode({'required': name})}")
                  for name in Trait.objects.filter(name__icontains=q).order_by("name")
                  .values_list("name", flat=True)[:SHOWN]]
        found += [("resource class", name,
                   f"{reverse('ui:capacity')}?{urlencode({'rc': name})}")
                  for name in ResourceClass.objects.filter(name__icontains=q).order_by("name")
                  .values_list("name", flat=True)[:SHOWN]]
    return found


@door(read=LIST_PROVIDERS)
@require_GET
def search(request):
    # the header's box is named `find`: the candidates pages have a `q` of their own
    q = (request.GET.get("q") or request.GET.get("find") or "").strip()
    found = _links(q) if q else []
    if len(found) == 1:
        return redirect(found[0][2])
    return render(request, "ui/search.html", {"q": q, "found": found, "shown": SHOWN})
