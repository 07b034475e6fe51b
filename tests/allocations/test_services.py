"""The service layer used inside an outer transaction (e.g. by the reshaper)."""
import uuid as uuidlib

import pytest

from foundation import domain_errors
from django.db import transaction

from allocations import exceptions, services
from allocations.models import Allocation, Consumer
from providers.models import ResourceProvider
from tests.factories import make_provider


def wanted(rp, amount, consumer=None, generation=services.UNCHECKED):
    return services.ConsumerAllocations(
        consumer_uuid=consumer or str(uuidlib.uuid4()), project_id="p", user_id="u",
        allocations={rp.uuid: {"VCPU": amount}}, consumer_type="INSTANCE",
        generation=generation)


@pytest.mark.django_db
def test_prepare_then_apply_in_one_outer_transaction():
    rp = make_provider("cn", inventory={"VCPU": 4})
    request = wanted(rp, 3)
    with transaction.atomic():
        plan = services.allocations_prepare(consumers=[request])
        services.allocations_apply(plan)
    assert Allocation.objects.get().used == 3
    assert Consumer.objects.get(uuid=request.consumer_uuid).generation == 1
    assert ResourceProvider.objects.get(pk=rp.pk).generation == 2  # inventory, allocation


@pytest.mark.django_db
def test_in_transaction_failure_is_rolled_back_by_the_caller():
    rp = make_provider("cn", inventory={"VCPU": 4})
    with pytest.raises(exceptions.CapacityExceeded):
        with transaction.atomic():
            services.allocations_replace_in_transaction(
                consumers=[wanted(rp, 2), wanted(rp, 3)])
    assert not Allocation.objects.exists()
    assert not Consumer.objects.exists()
    assert ResourceProvider.objects.get(pk=rp.pk).generation == 1  # its inventory write only


@pytest.mark.django_db
def test_unknown_class_error_is_chosen_by_the_caller():
    rp = make_provider("cn", inventory={"VCPU": 4})
    request = services.ConsumerAllocations(
        consumer_uuid=str(uuidlib.uuid4()), project_id="p", user_id="u",
        allocations={rp.uuid: {"CUSTOM_X": 1}})

    class Custom(Exception):
        pass

    with pytest.raises(Custom):
        services.allocations_replace(consumers=[request], on_unknown_class=Custom)


@pytest.mark.django_db
def test_retries_exhausted_is_a_concurrent_update(settings, monkeypatch):
    """When every attempt meets a conflict the last one is raised as a 409."""
    rp = make_provider("cn", inventory={"VCPU": 4})
    settings.PLACEMENT_ALLOCATION_CONFLICT_RETRY_COUNT = 2
    attempts = []

    def always_conflict(plan):
        attempts.append(plan)
        raise exceptions.AllocationWriteConflict("simulated")

    monkeypatch.setattr(services, "allocations_apply", always_conflict)
    with pytest.raises(exceptions.AllocationWriteConflict) as raised:
        services.allocations_replace(consumers=[wanted(rp, 1)])
    assert len(attempts) == 3
    assert isinstance(raised.value, domain_errors.ConcurrentUpdate)  # a 409 at the API
    assert raised.value.code == "placement.concurrent_update"
    assert "Inventory and/or allocations changed while attempting to allocate" in \
        raised.value.message
