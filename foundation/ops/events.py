"""What the services report to operators: counted in metrics and logged as warnings,
with the uuids that identify the write. One call per event from the service code."""
import logging

from foundation.ops import metrics

LOG = logging.getLogger("placement.allocations")


def allocation_write_retried(consumer_uuids, attempt, reason):
    """allocations_replace() starts over after a concurrent change."""
    metrics.ALLOCATION_RETRIES.inc()
    LOG.warning("Allocation write retried (attempt %d) for consumers %s: %s",
                attempt, ", ".join(consumer_uuids), reason,
                extra={"consumer_uuids": list(consumer_uuids), "attempt": attempt})


def capacity_refused(consumer_uuid, provider_uuid, resource_class):
    """An allocation write would exceed a provider's capacity (a 409 follows)."""
    metrics.CAPACITY_REFUSALS.inc()
    LOG.warning("Over-capacity allocation refused: consumer %s, %s on provider %s",
                consumer_uuid, resource_class, provider_uuid,
                extra={"consumer_uuid": consumer_uuid, "provider_uuid": provider_uuid,
                       "resource_class": resource_class})
