"""placement-manage, placement-status and placement-django-admin as an operator runs them:
separate processes, configured by placement.conf in OS_PLACEMENT_CONFIG_DIR or
--config-file, on a SQLite file of their own. The README lists their sub-commands and
exit codes (Placement 16.0.0's); the tests hold the commands to that list."""
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from placement_site import __version__

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = {"placement-manage": "placement_site.cmd.manage",
           "placement-status": "placement_site.cmd.status",
           "placement-django-admin": "placement_site.cmd.admin"}


def run(script, *args, config_dir=None, timeout=120):
    """Run a console script's main() in a new process; (exit code, stdout, stderr)."""
    # The suite's own database settings must not leak into the operator's command.
    env = {name: value for name, value in os.environ.items()
           if name not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "PLACEMENT_CONFIG_FILE")
           and not name.startswith(("PLACEMENT_", "OS_PLACEMENT_"))}
    if config_dir is not None:
        env["OS_PLACEMENT_CONFIG_DIR"] = str(config_dir)
    code = f"import sys; sys.argv[0] = {script!r}; from {SCRIPTS[script]} import main; main()"
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def etc(tmp_path):
    """A configuration directory as /etc/placement: placement.conf naming a new SQLite."""
    (tmp_path / "placement.conf").write_text(
        f"[placement_database]\nconnection = sqlite:///{tmp_path}/placement.sqlite3\n"
        f"[django]\ndata_dir = {tmp_path}\n")
    return tmp_path


def assert_one_line_error(code, err, prog):
    assert code != 0
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: "), err


def readme_commands():
    """{command: {exit code: meaning}} from the README's table of commands."""
    rows = re.findall(r"^\| `((?:placement-manage|placement-status)[^`]*)` \| ([^|]+) \|$",
                      (ROOT / "README.md").read_text(), re.MULTILINE)
    return {command: {int(number): meaning.strip()
                      for number, meaning in re.findall(r"(\d+) ([^,]+)", codes)}
            for command, codes in rows}


def test_the_readme_lists_placements_commands():
    assert set(readme_commands()) == {
        "placement-manage db sync", "placement-manage db version",
        "placement-manage db stamp VERSION",
        "placement-manage db online_data_migrations [--max-count N]",
        "placement-status upgrade check [--json]",
    }


def test_help_names_every_sub_command_of_the_readme(etc):
    for command in readme_commands():
        script, *words = command.split()
        words = [word for word in words if word.isidentifier() and not word.isupper()]
        code, out, _ = run(script, *words[:-1], "--help", config_dir=etc)
        assert code == 0, (command, out)
        assert words[-1] in out, (command, out)


def test_db_sync_is_idempotent_and_db_version_reports_the_schema(etc):
    assert run("placement-manage", "db", "version", config_dir=etc)[1].strip() == "None"
    for _ in range(2):
        code, out, err = run("placement-manage", "db", "sync", config_dir=etc)
        assert (code, out) == (0, ""), err
    code, out, _ = run("placement-manage", "db", "version", config_dir=etc)
    assert code == 0
    assert re.fullmatch(r"providers \d{4}_\w+, allocations \d{4}_\w+\n", out)
    with sqlite3.connect(etc / "placement.sqlite3") as db:
        # the standard names come with the schema
        assert db.execute("SELECT COUNT(*) FROM resource_classes").fetchone()[0] > 10


def test_exit_codes_are_the_readmes(etc):
    codes = readme_commands()
    assert run("placement-manage", "db", "sync", config_dir=etc)[0] == 0
    assert 0 in codes["placement-manage db sync"]

    code, out, _ = run("placement-manage", "db", "online_data_migrations", config_dir=etc)
    assert code == 0 and 0 in codes["placement-manage db online_data_migrations [--max-count N]"]
    assert "| Migration | Total Found | Completed |" in out
    for bad in ("0", "-3", "many"):
        code, out, _ = run("placement-manage", "db", "online_data_migrations",
                           "--max-count", bad, config_dir=etc)
        assert code == 127, bad
        assert out.strip() == "Must supply a positive value for max_count"
    assert 127 in codes["placement-manage db online_data_migrations [--max-count N]"]

    code, _, err = run("placement-manage", "db", "stamp", "abc", config_dir=etc)
    assert_one_line_error(code, err, "placement-manage")
    assert code in codes["placement-manage db stamp VERSION"]

    status = codes["placement-status upgrade check [--json]"]
    code, out, _ = run("placement-status", "upgrade", "check", config_dir=etc)
    assert code == 0 in status
    assert "| Upgrade Check Results" in out and "Result: Success" in out
    with sqlite3.connect(etc / "placement.sqlite3") as db:  # a standard trait goes missing
        db.execute("DELETE FROM traits WHERE name = 'HW_CPU_X86_AVX'")
    code, out, _ = run("placement-status", "upgrade", "check", "--json", config_dir=etc)
    assert code == 1 in status
    checks = {check["check"]: check["result"] for check in json.loads(out)["checks"]}
    assert checks["Standard resource classes and traits"] == 1
    # a provider tree broken behind the service's back
    assert run("placement-django-admin", "load_sample", "--if-empty", "shared_storage",
               config_dir=etc)[0] == 0
    with sqlite3.connect(etc / "placement.sqlite3") as db:
        db.execute("UPDATE resource_providers SET rght = 0 "
                   "WHERE id = (SELECT MIN(id) FROM resource_providers)")
    code, out, _ = run("placement-status", "upgrade", "check", config_dir=etc)
    assert code == 2 in status
    assert "Result: Failure" in out


def test_no_command_prints_help_and_exits_1_and_version_is_the_release(etc):
    code, out, _ = run("placement-manage", config_dir=etc)
    assert code == 1 and "{db}" in out
    code, out, err = run("placement-manage", "--version", config_dir=etc)
    assert code == 0 and (out + err).strip() == __version__


@pytest.mark.parametrize("script", ["placement-manage", "placement-status"])
def test_bad_configuration_is_one_line_and_a_non_zero_exit(script, tmp_path, etc):
    command = ["db", "version"] if script == "placement-manage" else ["upgrade", "check"]
    # a missing --config-file
    code, _, err = run(script, "--config-file", str(tmp_path / "nowhere.conf"), *command)
    assert_one_line_error(code, err, script)
    assert "nowhere.conf" in err
    # a configuration directory without placement.conf
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run(script, *command, config_dir=empty)
    assert_one_line_error(code, err, script)
    assert "no placement.conf" in err
    # a bad value
    (etc / "placement.conf").write_text("[placement]\nmax_allocation_candidates = lots\n")
    code, _, err = run(script, *command, config_dir=etc)
    assert_one_line_error(code, err, script)
    assert "max_allocation_candidates" in err
    # an unreachable database (255 is oslo.upgradecheck's "could not check")
    (etc / "placement.conf").write_text(
        "[placement_database]\nconnection = postgresql://nobody@127.0.0.1:9/none\n")
    code, _, err = run(script, *command, config_dir=etc)
    assert_one_line_error(code, err, script)
    assert code == (255 if script == "placement-status" else 1)
    assert "cannot reach the database" in err
    # an unknown command-line option: argparse's usage and error, exit 2
    code, _, err = run(script, "--frobnicate", *command, config_dir=etc)
    assert code == 2 and "unrecognized arguments: --frobnicate" in err


def test_placement_django_admin_runs_the_services_other_commands(etc):
    assert run("placement-manage", "db", "sync", config_dir=etc)[0] == 0
    code, out, err = run("placement-django-admin", "help", config_dir=etc)
    assert code == 0, err
    for command in ("import_placement_db", "load_sample", "reshape", "ensure_admin"):
        assert command in out
    code, out, err = run("placement-django-admin", "--config-file",
                         str(etc / "placement.conf"), "load_sample", "--if-empty",
                         "shared_storage")
    assert code == 0, err
    with sqlite3.connect(etc / "placement.sqlite3") as db:
        assert db.execute("SELECT COUNT(*) FROM resource_providers").fetchone()[0] > 0
