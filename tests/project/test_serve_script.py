"""scripts/serve, the README's first command, on a machine without nginx: gunicorn alone
on loopback, with one line saying what that gives up; beyond loopback it refuses."""
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from django.db import connection

from foundation import config
from tests.http import free_port, send, wait_for_port

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(connection.vendor != "sqlite",
                                reason="scripts/serve's default database is SQLite")


def environ(tmp_path, **more):
    clean = {k: v for k, v in os.environ.items() if k not in config.ENVIRONMENT}
    return {**clean, "PLACEMENT_DATA_DIR": str(tmp_path),
            "DATABASE_URL": f"sqlite:///{tmp_path}/placement.sqlite3",
            "NGINX": str(tmp_path / "no-nginx-here"), "WORKERS": "1", **more}


def test_without_nginx_it_serves_on_loopback_and_says_so(tmp_path):
    port = free_port(range(18950, 18999))
    log = tmp_path / "serve.log"
    process = subprocess.Popen(["scripts/serve"], cwd=ROOT, start_new_session=True,
                               env=environ(tmp_path, PORT=str(port)),
                               stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    try:
        assert wait_for_port(port, process, 240), log.read_text()[-3000:]
        status, _, body = send(f"http://127.0.0.1:{port}/resource_providers",
                               headers={"X-Auth-Token": "admin",
                                        "OpenStack-API-Version": "placement latest"})
        assert status == 200
        assert json.loads(body)["resource_providers"]   # the sample data
        lines = [line for line in log.read_text().splitlines() if "no nginx" in line]
        assert len(lines) == 1 and "without the front door's protections" in lines[0]
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


def test_without_nginx_it_refuses_beyond_loopback(tmp_path):
    result = subprocess.run(["scripts/serve"], cwd=ROOT, capture_output=True, text=True,
                            env=environ(tmp_path, HOST="0.0.0.0", PORT="1"), timeout=300)
    assert result.returncode == 1
    assert "refusing to serve on 0.0.0.0 without the front door" in result.stderr
