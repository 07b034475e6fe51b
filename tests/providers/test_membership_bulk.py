"""providers.services.membership_bulk: traits or aggregates changed across providers,
each on its own and generation-checked; the batch reverted entry by entry."""
import pytest

from providers.models import ChangeRecord, ResourceProvider
from providers.services import membership_bulk as bulk
from providers.services.inventory_bulk import APPLIED, CONFLICT, REFUSED
from providers.services.traits import trait_delete, trait_ensure
from tests.factories import make_provider

pytestmark = pytest.mark.django_db

AGG = "5f2c7a34-3c0e-4d6e-8a43-000000000001"


def fresh(provider):
    return ResourceProvider.objects.get(pk=provider.pk)


def names(provider):
    return sorted(fresh(provider).traits.values_list("name", flat=True))


def test_each_provider_on_its_own_and_one_already_so_is_not_written():
    a = make_provider("a", traits=["HW_CPU_X86_AVX2"])
    b = make_provider("b")
    change = bulk.MembershipChange(bulk.TRAITS, add=("HW_CPU_X86_AVX2",))
    outcomes = bulk.membership_bulk_update(
        targets=[(a.uuid, fresh(a).generation), (b.uuid, fresh(b).generation)], change=change)
    assert [(o.provider_name, o.status) for o in outcomes] == [("b", APPLIED)]
    assert fresh(a).generation == a.generation      # untouched
    assert names(b) == ["HW_CPU_X86_AVX2"]


def test_a_stale_generation_is_a_conflict_and_a_gone_trait_a_refusal():
    a, b, c = make_provider("a"), make_provider("b"), make_provider("c")
    trait_ensure(name="CUSTOM_GONE")
    targets = [(a.uuid, fresh(a).generation + 1), (b.uuid, fresh(b).generation),
               ("00000000-0000-0000-0000-00000000dead", 0)]
    trait_delete(name="CUSTOM_GONE")
    outcomes = bulk.membership_bulk_update(
        targets=targets, change=bulk.MembershipChange(bulk.TRAITS, add=("CUSTOM_GONE",)))
    assert [o.status for o in outcomes] == [CONFLICT, REFUSED, REFUSED]
    assert names(a) == names(b) == [] and not ChangeRecord.objects.filter(action="traits")
    assert c.traits.count() == 0


def test_aggregates_joined_then_the_batch_reverted():
    a = make_provider("a", aggregates=[AGG])
    other = "5f2c7a34-3c0e-4d6e-8a43-000000000002"
    bulk.membership_bulk_update(targets=[(a.uuid, fresh(a).generation)],
                                change=bulk.MembershipChange(bulk.AGGREGATES, add=(other,),
                                                             remove=(AGG,)))
    assert list(fresh(a).aggregates.values_list("uuid", flat=True)) == [other]
    entry = ChangeRecord.objects.filter(action="aggregates").latest("id")
    ChangeRecord.objects.filter(pk=entry.pk).update(request_id="req-batch-1")
    outcomes = bulk.membership_batch_revert(request_id="req-batch-1")
    assert [o.status for o in outcomes] == [APPLIED]
    assert list(fresh(a).aggregates.values_list("uuid", flat=True)) == [AGG]
