"""Authorization: Placement's policy rules and a small oslo.policy-style checker.

Check strings support `@`, `!`, `role:X`, `rule:NAME`, `project_id:%(project_id)s`
(any `attr:%(key)s` or `attr:literal`), `and`, `or`, `not` and parentheses.
Operators override rules with a JSON file (PLACEMENT_POLICY_FILE) mapping
rule names to check strings; an overridden rule is used as written.
"""
import json
import re
from functools import lru_cache

from django.conf import settings

from placement_site.api.exceptions import Forbidden

ADMIN_OR_SERVICE = "rule:admin_or_service_api"

# name: (new default, deprecated check or None)
BASE_RULES = {
    "admin_api": ("role:admin", None),
    "service_api": ("role:service", "role:admin"),
    "admin_or_service_api": ("role:admin or role:service", "role:admin"),
    "project_reader_api": ("role:reader and project_id:%(project_id)s", "role:admin"),
    "admin_or_project_reader_or_service_api": (
        "role:admin or rule:project_reader_api or role:service", "role:admin"),
}

ENDPOINT_RULES = {
    name: ADMIN_OR_SERVICE
    for name in [
        "placement:resource_providers:list",
        "placement:resource_providers:create",
        "placement:resource_providers:show",
        "placement:resource_providers:update",
        "placement:resource_providers:delete",
        "placement:resource_classes:list",
        "placement:resource_classes:create",
        "placement:resource_classes:show",
        "placement:resource_classes:update",
        "placement:resource_classes:delete",
        "placement:resource_providers:inventories:list",
        "placement:resource_providers:inventories:create",
        "placement:resource_providers:inventories:show",
        "placement:resource_providers:inventories:update",
        "placement:resource_providers:inventories:delete",
        "placement:resource_providers:aggregates:list",
        "placement:resource_providers:aggregates:update",
        "placement:resource_providers:usages",
        "placement:traits:list",
        "placement:traits:show",
        "placement:traits:update",
        "placement:traits:delete",
        "placement:resource_providers:traits:list",
        "placement:resource_providers:traits:update",
        "placement:resource_providers:traits:delete",
        "placement:allocations:manage",
        "placement:allocations:list",
        "placement:allocations:update",
        "placement:allocations:delete",
        "placement:resource_providers:allocations:list",
        "placement:allocation_candidates:list",
    ]
}
ENDPOINT_RULES["placement:usages"] = "rule:admin_or_project_reader_or_service_api"
ENDPOINT_RULES["placement:reshaper:reshape"] = "rule:service_api"


@lru_cache(maxsize=4)
def _load_overrides(path):
    if not path:
        return {}
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def effective_rules():
    """Rule name -> check string, after deprecations and operator overrides."""
    overrides = _load_overrides(settings.PLACEMENT_POLICY_FILE)
    legacy = not settings.PLACEMENT_POLICY_ENFORCE_NEW_DEFAULTS
    rules = {}
    for name, (new, deprecated) in BASE_RULES.items():
        if name in overrides:
            rules[name] = overrides[name]
        elif legacy and deprecated:
            rules[name] = f"({new}) or ({deprecated})"
        else:
            rules[name] = new
    for name, check in ENDPOINT_RULES.items():
        rules[name] = overrides.get(name, check)
    for name, check in overrides.items():
        rules.setdefault(name, check)
    return rules


# `%(key)s` substitutions contain parentheses but belong to their atom.
_TOKEN = re.compile(r"\s*(\(|\)|(?:%\([^)]*\)s|[^\s()])+)")


def _tokenize(text):
    return [m.group(1) for m in _TOKEN.finditer(text or "")]


class _Checker:
    """Recursive-descent evaluation: or < and < not < atom."""

    def __init__(self, rules, context, target, depth=0):
        self.rules = rules
        self.context = context
        self.target = target
        self.depth = depth

    def evaluate(self, text):
        tokens = _tokenize(text)
        if not tokens:
            return True  # an empty rule allows everything, as in oslo.policy
        self.tokens = tokens
        self.pos = 0
        result = self._or()
        return result

    def _peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _next(self):
        token = self._peek()
        self.pos += 1
        return token

    def _or(self):
        result = self._and()
        while self._peek() == "or":
            self._next()
            right = self._and()
            result = result or right
        return result

    def _and(self):
        result = self._not()
        while self._peek() == "and":
            self._next()
            right = self._not()
            result = result and right
        return result

    def _not(self):
        if self._peek() == "not":
            self._next()
            return not self._not()
        return self._atom()

    def _atom(self):
        token = self._next()
        if token == "(":
            result = self._or()
            self._next()  # ")"
            return result
        return self._check(token or "!")

    def _check(self, token):
        if token == "@":
            return True
        if token == "!":
            return False
        kind, _, match = token.partition(":")
        if kind == "rule":
            if self.depth > 20 or match not in self.rules:
                return False
            return _Checker(self.rules, self.context, self.target, self.depth + 1).evaluate(
                self.rules[match])
        if kind == "role":
            return match.lower() in (r.lower() for r in self.context.roles)
        # generic `attr:value`, value may be %(key)s taken from the target
        if match.startswith("%(") and match.endswith(")s"):
            expected = self.target.get(match[2:-2])
        else:
            expected = match
        actual = getattr(self.context, kind, None)
        return expected is not None and actual is not None and str(actual) == str(expected)


def authorize(request, rule, target=None):
    """Raise Forbidden unless the caller may perform `rule`."""
    context = request.context
    if target is None:
        target = {"project_id": context.project_id, "user_id": context.user_id}
    rules = effective_rules()
    # Every Placement rule is project-scoped: system or domain tokens never pass.
    scoped_out = bool(context.system_scope) or bool(context.domain_id)
    allowed = (not scoped_out) and _Checker(rules, context, target).evaluate(
        rules.get(rule, ADMIN_OR_SERVICE))
    if not allowed:
        raise Forbidden(f"Policy does not allow {rule} to be performed.")
