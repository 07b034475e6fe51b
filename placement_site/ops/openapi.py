"""The OpenAPI 3.1 document of the Placement API (filled in by part 4)."""
import json

from django.http import HttpResponse


def document():
    return {"openapi": "3.1.0", "info": {"title": "Placement", "version": "1.39"}, "paths": {}}


def openapi_view(request):
    return HttpResponse(json.dumps(document()), content_type="application/json")
