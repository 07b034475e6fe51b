"""The JSON renderer of every DRF view: orjson where it can, DRF's encoder otherwise.

Listing thousands of providers spends more time encoding than querying with the
standard library encoder. Bodies are plain dicts, lists, strings and numbers; should
one ever hold something orjson does not encode (a Decimal, a huge integer), DRF's own
renderer writes it as before.
"""
import orjson
from rest_framework.renderers import JSONRenderer


class FastJSONRenderer(JSONRenderer):

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        try:
            return orjson.dumps(data)
        except TypeError:
            return super().render(data, accepted_media_type, renderer_context)
