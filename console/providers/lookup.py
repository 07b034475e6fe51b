"""The provider a page's URL names."""
from django.http import Http404

from providers.models import ResourceProvider


def provider_or_404(uuid):
    provider = (ResourceProvider.objects.select_related("parent", "root")
                .filter(uuid=uuid).first())
    if provider is None:
        raise Http404(f"No resource provider with uuid {uuid}")
    return provider
