"""Operating the service: Prometheus metrics, request logs, service events, the
garbage-collector settings and the outermost middleware that measures every request.

Foundation: every app may import these (services report events, the engine counts
its work); nothing here imports an app. The endpoints that look into the apps,
/readyz and /openapi.json, are the project's (placement_site/health.py, openapi.py); the
middleware finds them through settings.PLACEMENT_OPERATOR_ENDPOINTS.
"""
