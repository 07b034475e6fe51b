"""The roof: the only part of placement_site that imports the apps, to compose them.

placement_site is two things. Its ground floor (api/, ops/, domain_errors.py,
uuids.py, config.py, db_routing.py ...) is what every app may import: the API
plumbing, the domain-error base, uuid handling, metrics and logs. It imports no app.
The roof sits on top of the apps and puts them together:

* placement_site/urls.py: the one route table (each app's api/urls.py and ui_urls.py);
* placement_site/roof/openapi.py: the OpenAPI document, from each app's api/schemas.py;
* placement_site/roof/health.py: /healthz and /readyz, asking the apps' selectors;
* placement_site/cmd/status.py: placement-status, running allocations' status checks.

Imports go: apps -> ground floor, roof -> apps and ground floor; never ground floor ->
apps or roof (the floor reaches a roof view only by its dotted name in settings).
The .importlinter contracts hold this, and `lint-imports` runs in .ci/run and in
tests/test_import_contracts.py.
"""
