"""The ground floor every app stands on: the API's plumbing (api/: microversions, the
error body, auth, policy, middleware, the base viewset), the domain-error base, uuids,
configuration (placement.conf), operations (ops/: metrics, logs, events), database
routing and backends, the front door's limits and the UI helpers every app's pages use.

It imports no app and nothing of the project (placement_site) above it: .importlinter
holds the floors (docs/contributors/layout.md)."""
