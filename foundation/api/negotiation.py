"""DRF content negotiation: always JSON."""
from rest_framework.negotiation import BaseContentNegotiation


class JSONOnlyNegotiation(BaseContentNegotiation):
    """Placement speaks JSON only; the Accept check is per endpoint (see accepts_json)."""

    def select_parser(self, request, parsers):
        return None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type
