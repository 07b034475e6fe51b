"""A real gunicorn started the way an operator starts it: placement.conf options and a
YAML policy file take effect, a bad option stops the start with one line.

The server keeps its own SQLite file (the options under test do not depend on the
database); DATABASE_URL and the other variables are removed so that the file decides.
"""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from placement_site import config
from placement_site.api.policy import ENDPOINT_RULES

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")
PORT = 18411  # this project's test port range


def server_environ(conf_path):
    environ = {k: v for k, v in os.environ.items() if k not in config.ENVIRONMENT}
    environ["PLACEMENT_CONFIG_FILE"] = str(conf_path)
    return environ


def start(conf_path, port=PORT):
    return subprocess.Popen(
        [str(GUNICORN), "placement_site.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--log-level", "warning"],
        cwd=ROOT, env=server_environ(conf_path), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


def call(method, path, token="user", body=None, headers=None):
    request = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", method=method)
    request.add_header("OpenStack-API-Version", "placement latest")
    if token:
        request.add_header("X-Auth-Token", token)
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, data, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("live")
    (workdir / "policy.yaml").write_text(
        "# every endpoint rule open, as an operator's policy.yaml would say it\n"
        + "".join(f'"{name}": "@"\n' for name in ENDPOINT_RULES))
    conf_path = workdir / "placement.conf"
    conf_path.write_text(f"""
[placement_database]
connection = sqlite:///{workdir}/db.sqlite3
[oslo_policy]
# relative: found beside this file
policy_file = policy.yaml
[placement]
max_allocation_candidates = 1
[django]
data_dir = {workdir}/data
allowed_hosts = ui.example.com
""")
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT,
                   env=server_environ(conf_path), check=True)
    server = start(conf_path)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", PORT), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"server did not start: {server.communicate()[1]}")
                time.sleep(0.2)
        yield workdir
    finally:
        server.terminate()
        server.communicate(timeout=30)


def test_yaml_policy_override_takes_effect(live):
    """The default rules would refuse a token without roles everywhere."""
    status, headers, body = call("GET", "/traits?name=startswith:HW_CPU")
    assert status == 200, body
    assert headers["Content-Type"] == "application/json"
    status, _, body = call("POST", "/resource_providers", body={"name": "cn1"})
    assert status == 200, body


def test_options_of_the_file_take_effect(live):
    for name in ("a", "b"):
        status, _, body = call("POST", "/resource_providers", body={"name": f"max-{name}"})
        uuid = json.loads(body)["uuid"]
        status, _, body = call("PUT", f"/resource_providers/{uuid}/inventories", body={
            "resource_provider_generation": 0, "inventories": {"VCPU": {"total": 4}}})
        assert status == 200, body
    status, _, body = call("GET", "/allocation_candidates?resources=VCPU:1")
    assert status == 200
    assert len(json.loads(body)["allocation_requests"]) == 1  # max_allocation_candidates
    assert (live / "data" / "secret_key").exists()  # generated for this installation


def test_any_host_gets_json_while_the_ui_keeps_its_host_check(live):
    status, headers, body = call("GET", "/", headers={"Host": "placement_api:8778"})
    assert status == 200 and headers["Content-Type"] == "application/json"
    status, _, body = call("GET", "/resource_providers", token="",
                           headers={"Host": "placement_api:8778"})
    assert status == 401 and json.loads(body)["title"] == "Unauthorized"
    status, _, _ = call("GET", "/ui/", headers={"Host": "placement_api:8778"})
    assert status == 400


def test_a_policy_file_broken_later_keeps_the_last_good_rules(live):
    policy = live / "policy.yaml"
    good = policy.read_text()
    try:
        policy.write_text('"placement:traits:list": [unclosed\n')
        os.utime(policy, (time.time() + 5, time.time() + 5))
        assert call("GET", "/traits")[0] == 200
        policy.write_text('"placement:traits:list": "!"\n')
        os.utime(policy, (time.time() + 10, time.time() + 10))
        assert call("GET", "/traits")[0] == 403
    finally:
        policy.write_text(good)
        os.utime(policy, (time.time() + 15, time.time() + 15))


@pytest.mark.parametrize("text, message", [
    ("[placement]\nmax_allocation_candidates = lots\n",
     "[placement] max_allocation_candidates: bad value in"),
    ("[placement_database]\nconnection = mysql+pymysql://root@127.0.0.1/placement\n",
     "import_placement_db"),
    ("[oslo_policy]\npolicy_file = /nonexistent/policy.yaml\n",
     "[oslo_policy] policy_file: no such file /nonexistent/policy.yaml"),
    ("[oslo_policy]\npolicy_file = broken.yaml\n", "unusable policy rules"),
])
def test_a_bad_option_stops_the_start_with_one_line(tmp_path, text, message):
    (tmp_path / "broken.yaml").write_text("- a list\n- not a mapping: [\n")
    conf_path = tmp_path / "placement.conf"
    conf_path.write_text(text + f"[django]\ndata_dir = {tmp_path}\n")
    server = start(conf_path, port=PORT + 1)
    try:
        _, stderr = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
    assert server.returncode != 0
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if "configuration error" in line]
    assert len(errors) == 1 and message in errors[0], stderr
