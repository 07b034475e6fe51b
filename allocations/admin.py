"""Django admin for consumers and their projects, users and types.

Allocations are written by the API (allocations.services); the admin shows
them read-only and can delete a consumer, which goes through
allocations_delete like DELETE /allocations/{consumer_uuid}. Projects,
users and consumer types are created on first use by allocation writes and
have no write path of their own, so they are view-only here.
"""
from django.contrib import admin, messages
from django.db import transaction
from django.db.models import Count

from allocations import services
from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from foundation.admin import QueryStringLookupsMixin
from foundation.domain_errors import DomainError, error_message
from providers.admin.forms import ServiceAdminMixin


class ReadOnlyAdminMixin:
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class AllocationInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = Allocation
    fields = ["provider", "resource_class", "used", "created_at"]
    readonly_fields = fields
    can_delete = False
    extra = 0

    def has_delete_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        # the consumer too: each row's title (Allocation.__str__) names it
        return (super().get_queryset(request)
                .select_related("provider", "resource_class", "consumer")
                .order_by("provider__name"))


@admin.register(Consumer)
class ConsumerAdmin(QueryStringLookupsMixin, ReadOnlyAdminMixin, ServiceAdminMixin, admin.ModelAdmin):
    list_display = ["uuid", "project", "user", "consumer_type_name", "generation", "created_at"]
    list_select_related = ["project", "user", "consumer_type"]
    list_filter = ["consumer_type"]
    search_fields = ["uuid", "project__external_id", "user__external_id"]
    inlines = [AllocationInline]
    actions = ["delete_consumers"]

    @admin.display(description="consumer type", ordering="consumer_type__name")
    def consumer_type_name(self, obj):
        return obj.consumer_type_name

    def delete_model(self, request, obj):
        services.allocations_delete(consumer_uuid=obj.uuid)

    @admin.action(description="Delete selected consumers and their allocations",
                  permissions=["delete"])
    def delete_consumers(self, request, queryset):
        uuids = list(queryset.values_list("uuid", flat=True))
        try:
            with transaction.atomic():
                for uuid in uuids:
                    services.allocations_delete(consumer_uuid=uuid)
        except DomainError as exc:
            self.message_user(request, f"Nothing deleted: {error_message(exc)}", messages.ERROR)
        else:
            self.message_user(request, f"Deleted {len(uuids)} consumer(s) and their allocations.")


class NamedAdmin(QueryStringLookupsMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["__str__", "consumer_count"]
    search_fields = ["external_id"]

    def has_delete_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_consumers=Count("consumers"))

    @admin.display(description="consumers", ordering="_consumers")
    def consumer_count(self, obj):
        return obj._consumers


@admin.register(Project)
class ProjectAdmin(NamedAdmin):
    pass


@admin.register(User)
class PlacementUserAdmin(NamedAdmin):
    pass


@admin.register(ConsumerType)
class ConsumerTypeAdmin(NamedAdmin):
    search_fields = ["name"]
