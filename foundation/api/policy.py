"""Authorization: Placement's policy rules (policy.md) enforced by oslo.policy.

Every rule is registered as a documented default; operators override rules in a YAML or
JSON policy file or policy directory ([oslo_policy] policy_file / policy_dirs), and an
overridden rule is used as written. [oslo_policy] enforce_new_defaults (true, as in
Placement 16.0.0) drops the deprecated `role:admin` alternatives. oslo.policy checks a
token's scope against every rule's scope types itself: system- and domain-scoped tokens
are refused on every endpoint (all are project-scoped), as by Placement.
"""
import copy
import logging
import threading
import time

from django.conf import settings
from oslo_config import cfg
from oslo_policy import policy

from foundation import config
from foundation.domain_errors import Forbidden

LOG = logging.getLogger(__name__)

ADMIN_OR_SERVICE = "rule:admin_or_service_api"
PROJECT_SCOPE = ["project"]
DEFAULT_POLICY_FILE = "policy.yaml"  # oslo.policy's default name: optional


def _legacy_admin(name):
    return policy.DeprecatedRule(
        name=name, check_str="role:admin",
        deprecated_reason="Placement's policies know the admin, service and project "
                          "reader personas; the admin-only default is gone",
        deprecated_since="7.0.0")


BASE_RULES = [
    policy.RuleDefault("admin_api", "role:admin",
                       description="Administrators: the operator endpoints outside "
                                   "[django] public_paths (/metrics by default); no "
                                   "Placement endpoint rule uses it by default."),
    policy.RuleDefault("service_api", "role:service",
                       description="Other services (nova, neutron...) calling on their own behalf.",
                       deprecated_rule=_legacy_admin("service_api")),
    policy.RuleDefault("admin_or_service_api", "role:admin or role:service",
                       description="Administrators or services: most endpoints.",
                       deprecated_rule=_legacy_admin("admin_or_service_api")),
    policy.RuleDefault("project_reader_api", "role:reader and project_id:%(project_id)s",
                       description="Readers of the project the request is about.",
                       deprecated_rule=_legacy_admin("project_reader_api")),
    policy.RuleDefault("admin_or_project_reader_or_service_api",
                       "role:admin or rule:project_reader_api or role:service",
                       description="Administrators, services or readers of the project "
                                   "the request is about.",
                       deprecated_rule=_legacy_admin("admin_or_project_reader_or_service_api")),
]


def _endpoint(name, description, *operations, check=ADMIN_OR_SERVICE):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check, description=description,
        operations=[{"method": method, "path": path} for method, path in operations],
        scope_types=PROJECT_SCOPE)


RP = "/resource_providers/{uuid}"
ENDPOINT_DEFAULTS = [
    _endpoint("placement:resource_providers:list", "List resource providers.",
              ("GET", "/resource_providers")),
    _endpoint("placement:resource_providers:create", "Create resource provider.",
              ("POST", "/resource_providers")),
    _endpoint("placement:resource_providers:show", "Show resource provider.", ("GET", RP)),
    _endpoint("placement:resource_providers:update", "Update resource provider.",
              ("PUT", RP)),
    _endpoint("placement:resource_providers:delete", "Delete resource provider.",
              ("DELETE", RP)),
    _endpoint("placement:resource_classes:list", "List resource classes.",
              ("GET", "/resource_classes")),
    _endpoint("placement:resource_classes:create", "Create resource class.",
              ("POST", "/resource_classes")),
    _endpoint("placement:resource_classes:show", "Show resource class.",
              ("GET", "/resource_classes/{name}")),
    _endpoint("placement:resource_classes:update", "Update resource class.",
              ("PUT", "/resource_classes/{name}")),
    _endpoint("placement:resource_classes:delete", "Delete resource class.",
              ("DELETE", "/resource_classes/{name}")),
    _endpoint("placement:resource_providers:inventories:list",
              "List resource provider inventories.", ("GET", RP + "/inventories")),
    _endpoint("placement:resource_providers:inventories:create",
              "Create one resource provider inventory.", ("POST", RP + "/inventories")),
    _endpoint("placement:resource_providers:inventories:show",
              "Show resource provider inventory.",
              ("GET", RP + "/inventories/{resource_class}")),
    _endpoint("placement:resource_providers:inventories:update",
              "Update resource provider inventory.", ("PUT", RP + "/inventories"),
              ("PUT", RP + "/inventories/{resource_class}")),
    _endpoint("placement:resource_providers:inventories:delete",
              "Delete resource provider inventory.", ("DELETE", RP + "/inventories"),
              ("DELETE", RP + "/inventories/{resource_class}")),
    _endpoint("placement:resource_providers:aggregates:list",
              "List resource provider aggregates.", ("GET", RP + "/aggregates")),
    _endpoint("placement:resource_providers:aggregates:update",
              "Update resource provider aggregates.", ("PUT", RP + "/aggregates")),
    _endpoint("placement:resource_providers:usages", "List resource provider usages.",
              ("GET", RP + "/usages")),
    _endpoint("placement:usages", "Show the resources a project (or one of its users) uses.",
              ("GET", "/usages"), check="rule:admin_or_project_reader_or_service_api"),
    _endpoint("placement:traits:list", "List traits.", ("GET", "/traits")),
    _endpoint("placement:traits:show", "Show trait.", ("GET", "/traits/{name}")),
    _endpoint("placement:traits:update", "Update trait.", ("PUT", "/traits/{name}")),
    _endpoint("placement:traits:delete", "Delete trait.", ("DELETE", "/traits/{name}")),
    _endpoint("placement:resource_providers:traits:list", "List resource provider traits.",
              ("GET", RP + "/traits")),
    _endpoint("placement:resource_providers:traits:update",
              "Update resource provider traits.", ("PUT", RP + "/traits")),
    _endpoint("placement:resource_providers:traits:delete",
              "Delete resource provider traits.", ("DELETE", RP + "/traits")),
    _endpoint("placement:allocations:manage", "Manage allocations.",
              ("POST", "/allocations")),
    _endpoint("placement:allocations:list", "List allocations.",
              ("GET", "/allocations/{consumer_uuid}")),
    _endpoint("placement:allocations:update", "Update allocations.",
              ("PUT", "/allocations/{consumer_uuid}")),
    _endpoint("placement:allocations:delete", "Delete allocations.",
              ("DELETE", "/allocations/{consumer_uuid}")),
    _endpoint("placement:resource_providers:allocations:list",
              "List resource provider allocations.", ("GET", RP + "/allocations")),
    _endpoint("placement:allocation_candidates:list", "List allocation candidates.",
              ("GET", "/allocation_candidates")),
    _endpoint("placement:reshaper:reshape", "Move inventories and allocations between providers in one step.",
              ("POST", "/reshaper"), check="rule:service_api"),
]
ENDPOINT_RULES = {rule.name: rule.check_str for rule in ENDPOINT_DEFAULTS}

# Rules of the layers above the API (the operator console's), registered by their app at
# start (register_defaults) so that one Enforcer, and one policy file, decides for all.
_more_defaults = []


def register_defaults(rules):
    """Add documented defaults beside the API's; before the first enforcer() call."""
    with _lock:
        known = {rule.name for rule in _more_defaults}
        _more_defaults.extend(rule for rule in rules if rule.name not in known)
        _enforcers.clear()


def every_default():
    """Every rule default: the base rules, the API's endpoints', then the others'."""
    return BASE_RULES + ENDPOINT_DEFAULTS + list(_more_defaults)


class PolicyFileError(Exception):
    """The configured policy file or directory cannot be read."""


# How often, at most, an Enforcer looks at its policy files for changes; an edited file
# takes effect within this many seconds. oslo.policy looks on every check, and a check
# walks its rules: with both, 0.1-0.3 ms of every API request; now a few microseconds.
POLICY_FILES_CHECKED_EVERY = 1.0


class PlacementEnforcer(policy.Enforcer):
    """An Enforcer that looks at its policy files at most every
    POLICY_FILES_CHECKED_EVERY seconds, keeps its last good rules when a file turns bad,
    and remembers its decisions until it next looks (decide())."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._next_look = 0.0
        self._decisions = {}
        self._looking = threading.Lock()

    def load_rules(self, force_reload=False):
        # enforce() calls this on every check: the files are looked at only when due
        if not self._look_due(force_reload):
            return
        with self._looking:
            if not self._look_due(force_reload):
                return   # another thread has just looked
            self._reload(force_reload)
            # a new dict only now: what a thread decided while the rules were being
            # reloaded went into the old one
            self._decisions = {}
            self._next_look = time.monotonic() + POLICY_FILES_CHECKED_EVERY

    def _look_due(self, force_reload):
        return force_reload or not self.rules or time.monotonic() >= self._next_look

    def _reload(self, force_reload):
        rules, file_rules = copy.copy(self.rules), copy.copy(self.file_rules)
        try:
            super().load_rules(force_reload)
        except Exception as exc:  # YAML errors, a list instead of a mapping, bad checks...
            message = (f"[oslo_policy] {self.policy_path or self.policy_file}: unusable "
                       f"policy rules: {' '.join(str(exc).split())}")
            if not rules:
                raise PolicyFileError(message) from exc
            LOG.error("%s; the previous rules stay in force", message)
            self.rules, self.file_rules = rules, file_rules

    def decide(self, rule, target, creds):
        """enforce(rule, target, creds), remembered until the policy files are next looked
        at: a decision depends on nothing else. What enforce() raises (a token of the
        wrong scope) is never remembered."""
        self.load_rules()
        decisions = self._decisions
        key = (rule, _frozen(target), _frozen(creds))
        allowed = decisions.get(key)
        if allowed is None:
            allowed = decisions[key] = bool(self.enforce(rule, target, creds))
        return allowed


def _frozen(mapping):
    """A dict of strings, None and lists of strings (targets, credentials) as a key."""
    return tuple(sorted((name, tuple(value) if isinstance(value, list) else value)
                        for name, value in mapping.items()))


_lock = threading.Lock()
_enforcers = {}


def _enforcer_key():
    return (settings.PLACEMENT_POLICY_FILE, tuple(settings.PLACEMENT_POLICY_DIRS),
            settings.PLACEMENT_POLICY_ENFORCE_NEW_DEFAULTS)


def enforcer():
    """The Enforcer for the current settings (tests change them). It (re)loads its
    policy files itself, on each check, when they changed."""
    key = _enforcer_key()
    with _lock:
        found = _enforcers.get(key)
        if found is None:
            found = _enforcers[key] = _build_enforcer(*key)
    return found


def _build_enforcer(policy_file, policy_dirs, enforce_new_defaults):
    # A ConfigOpts of its own, on the same files, so that relative policy paths are
    # found where oslo.policy looks for them (beside the configuration files).
    conf = cfg.ConfigOpts()
    conf(args=[], project="placement", default_config_files=settings.CONF.config_file,
         default_config_dirs=[], use_env=False)
    result = PlacementEnforcer(conf, policy_file=policy_file)
    conf.set_override("enforce_new_defaults", enforce_new_defaults, group="oslo_policy")
    conf.set_override("policy_dirs", list(policy_dirs), group="oslo_policy")
    result.register_defaults(every_default())
    if policy_file != DEFAULT_POLICY_FILE and not conf.find_file(policy_file):
        raise PolicyFileError(f"[oslo_policy] policy_file: no such file {policy_file}")
    return result


def check_at_start():
    """Load the policy now: an unreadable file stops the service with one line."""
    try:
        enforcer().load_rules()
    except PolicyFileError as exc:
        config.stop(exc)


def credentials(context):
    return {"user_id": context.user_id, "project_id": context.project_id,
            "roles": context.roles, "service_roles": context.service_roles,
            "system_scope": context.system_scope, "domain_id": context.domain_id}


def authorize(request, rule, target=None):
    """Raise Forbidden unless the caller may perform `rule`."""
    context = request.context
    if target is None:
        target = {"project_id": context.project_id, "user_id": context.user_id}
    if not enforcer().decide(rule, target, credentials(context)):
        raise Forbidden(f"Policy does not allow {rule} to be performed.")
