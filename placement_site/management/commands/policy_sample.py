"""python manage.py policy_sample: the default policy as a commented policy.yaml."""
import textwrap

from django.core.management.base import BaseCommand

from foundation.api.policy import every_default


class Command(BaseCommand):
    help = ("Print Placement's default policy rules as a commented YAML file: uncomment "
            "and change a rule to override it ([oslo_policy] policy_file).")

    def handle(self, *args, **options):
        lines = ["# Placement policy: every rule at its default. An uncommented rule is used",
                 "# exactly as written (no fallback to the deprecated check).", ""]
        for rule in every_default():
            lines += [f"# {line}" for line in textwrap.wrap(rule.description, 86)]
            for operation in getattr(rule, "operations", []):
                lines.append(f"# {operation['method']}  {operation['path']}")
            if rule.scope_types:
                lines.append(f"# Intended scope(s): {', '.join(rule.scope_types)}")
            lines.append(f'#"{rule.name}": "{rule.check_str}"')
            deprecated = rule.deprecated_rule
            if deprecated is not None:
                note = (f"With [oslo_policy] enforce_new_defaults = false the check is "
                        f'also met by the deprecated "{deprecated.check_str}" '
                        f"(since {deprecated.deprecated_since}).")
                lines += [f"# {line}" for line in textwrap.wrap(note, 86)]
            lines.append("")
        self.stdout.write("\n".join(lines))
