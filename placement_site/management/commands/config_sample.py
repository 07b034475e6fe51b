"""python manage.py config_sample: a commented placement.conf with every option."""
import textwrap

from django.core.management.base import BaseCommand
from oslo_config import cfg

from foundation import config

KEYSTONE_AUTH_NOTE = """\
# The service user auth_token checks tokens with (keystoneauth options), e.g.:
#auth_type = password
#auth_url = https://keystone.example.com/v3
#username = placement
#password = <secret>
#project_name = service
#user_domain_name = Default
#project_domain_name = Default
"""


def _value(value):
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return "" if value is None else str(value)


class Command(BaseCommand):
    help = ("Print a sample placement.conf: every section and option the service reads, "
            "commented out, with Placement's defaults.")

    def handle(self, *args, **options):
        conf = cfg.ConfigOpts()
        config.register_options(conf)
        conf(args=[], project="placement", default_config_files=[], default_config_dirs=[],
             use_env=False)
        lines = ["# placement.conf: read from /etc/placement/placement.conf and the file "
                 "named by PLACEMENT_CONFIG_FILE.",
                 "# Environment variables (docs/operators/configuration.md) win over the file.",
                 ""]
        for group, opts in config.option_groups():
            lines.append(f"[{group}]")
            for opt in opts:
                if opt.deprecated_for_removal:
                    continue
                help_text = " ".join((opt.help or "").split())
                lines += [f"# {line}" for line in textwrap.wrap(help_text, 86)]
                choices = getattr(opt.type, "choices", None)
                if choices:
                    lines.append(f"# one of: {', '.join(str(c) for c in choices)}")
                lines.append(f"#{opt.dest} = {_value(conf[group][opt.dest])}")
                lines.append("")
            if group == "keystone_authtoken":
                lines.append(KEYSTONE_AUTH_NOTE)
        self.stdout.write("\n".join(lines))
