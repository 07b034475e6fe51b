"""Operating the service: health checks, Prometheus metrics, request logs and the
OpenAPI document. These endpoints live outside Placement's routes and need no token
(see README "Operating in production")."""
