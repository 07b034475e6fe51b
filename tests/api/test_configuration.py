"""placement.conf and environment variables (foundation.config), the API's Host
handling and the UI pages' browser protections."""
import pytest
from django.core.management import call_command

from foundation import config


def write_conf(tmp_path, text):
    path = tmp_path / "placement.conf"
    path.write_text(text)
    return {"PLACEMENT_CONFIG_FILE": str(path)}


def test_placement_options_come_from_the_file(tmp_path):
    conf = config.load(write_conf(tmp_path, """
[api]
auth_strategy = keystone
[placement_database]
connection = postgresql+psycopg2://placement:pw@db.example.com/placement
[placement]
max_allocation_candidates = 5
randomize_allocation_candidates = true
allocation_candidates_generation_strategy = breadth-first
incomplete_consumer_project_id = p0
[oslo_policy]
enforce_new_defaults = false
policy_file = /etc/placement/policy.yaml
[cors]
allowed_origin = https://horizon.example.com
"""))
    assert conf.api.auth_strategy == "keystone"
    assert conf.placement.max_allocation_candidates == 5
    assert conf.placement.randomize_allocation_candidates is True
    assert conf.placement.allocation_candidates_generation_strategy == "breadth-first"
    assert conf.placement.incomplete_consumer_project_id == "p0"
    assert conf.oslo_policy.enforce_new_defaults is False
    assert conf.cors.allowed_origin == ["https://horizon.example.com"]
    assert conf.cors.allow_headers[-1] == "OpenStack-API-Version"  # Placement's default


def test_defaults_are_placement_16s():
    conf = config.load({})
    assert conf.api.auth_strategy == "noauth2"
    assert conf.oslo_policy.enforce_new_defaults is True
    assert conf.placement.max_allocation_candidates == -1


def test_scope_enforcement_is_oslo_policys_own(tmp_path):
    """oslo.policy 6 always checks a token's scope; no option of ours turns it off (an
    unknown option in a file is ignored, as by Placement)."""
    conf = config.load({**write_conf(tmp_path, "[oslo_policy]\nenforce_scope = false\n"),
                        "PLACEMENT_POLICY_ENFORCE_SCOPE": "false"})
    assert "enforce_scope" not in conf.oslo_policy
    assert "PLACEMENT_POLICY_ENFORCE_SCOPE" not in config.ENVIRONMENT


def test_environment_variables_win_over_the_file(tmp_path):
    environ = write_conf(tmp_path, "[placement]\nmax_allocation_candidates = 5\n"
                                   "[api]\nauth_strategy = keystone\n")
    conf = config.load({**environ, "PLACEMENT_MAX_ALLOCATION_CANDIDATES": "7",
                        "PLACEMENT_CORS_ALLOWED_ORIGINS": "http://a, http://b",
                        "PLACEMENT_POLICY_ENFORCE_NEW_DEFAULTS": "false"})
    assert conf.placement.max_allocation_candidates == 7
    assert conf.api.auth_strategy == "keystone"
    assert conf.cors.allowed_origin == ["http://a", "http://b"]
    assert conf.oslo_policy.enforce_new_defaults is False


@pytest.mark.parametrize("text, message", [
    ("[placement]\nmax_allocation_candidates = lots\n",
     "[placement] max_allocation_candidates: bad value in"),
    ("[placement]\nallocation_candidates_generation_strategy = sideways\n",
     "[placement] allocation_candidates_generation_strategy: bad value in"),
    ("[api]\nauth_strategy = ldap\n", "[api] auth_strategy: bad value in"),
    ("[oslo_policy]\nenforce_new_defaults = perhaps\n",
     "[oslo_policy] enforce_new_defaults: bad value in"),
    ("[placement_database]\nconnection = mysql+pymysql://root@db/placement?pool=9\n",
     "[placement_database] connection: unknown query parameter pool"),
    ("[placement_database]\nconnection = mysql+mysqlconnector://root@db/placement\n",
     "[placement_database] connection: unsupported MySQL driver 'mysqlconnector'"),
    ("[placement_database]\nconnection = mysql+pymysql://root@db/\n",
     "[placement_database] connection: no database name"),
    ("[placement_database]\nconnection = oracle://db/placement\n",
     "[placement_database] connection: unsupported database"),
    ("no section here\n", "Failed to parse"),
    ("[django]\npublic_paths = /healthz, /resource_providers\n",
     "[django] public_paths: /resource_providers is not an operator endpoint"),
    # a frozen database must cost a client our 503, before nginx's 504
    ("[api]\nrequest_timeout = 30\n[placement_database]\nround_trip_timeout = 30\n",
     "[placement_database] round_trip_timeout (30) must be below [api] request_timeout (30)"),
])
def test_bad_file_values_name_the_option(tmp_path, text, message):
    with pytest.raises(config.ConfigError) as caught:
        config.load(write_conf(tmp_path, text))
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_bad_environment_values_name_the_variable_and_the_option():
    with pytest.raises(config.ConfigError, match=r"^DEBUG \(\[django\] debug\): "):
        config.load({"DEBUG": "maybe"})


def test_the_system_config_file_is_read_when_it_exists(tmp_path, monkeypatch):
    assert config.SYSTEM_CONFIG_DIR == "/etc/placement"
    monkeypatch.setattr(config, "SYSTEM_CONFIG_DIR", str(tmp_path))
    system = tmp_path / "placement.conf"
    assert config.load({}).placement.max_allocation_candidates == -1  # absent: skipped
    system.write_text("[placement]\nmax_allocation_candidates = 3\n"
                      "[api]\nauth_strategy = keystone\n")
    conf = config.load({})
    assert conf.placement.max_allocation_candidates == 3
    assert conf.api.auth_strategy == "keystone"
    # PLACEMENT_CONFIG_FILE is read after it, and the environment wins over both
    named = tmp_path / "named"
    named.mkdir()
    conf = config.load({**write_conf(named, "[placement]\nmax_allocation_candidates = 4\n"),
                        "PLACEMENT_AUTH_STRATEGY": "noauth2"})
    assert conf.placement.max_allocation_candidates == 4
    assert conf.api.auth_strategy == "noauth2"
    assert conf.config_file == [str(system), str(named / "placement.conf")]


def test_os_placement_config_dir_names_the_directory_of_placement_conf(tmp_path):
    (tmp_path / "placement.conf").write_text("[placement]\nmax_allocation_candidates = 7\n")
    conf = config.load({"OS_PLACEMENT_CONFIG_DIR": str(tmp_path)})
    assert conf.placement.max_allocation_candidates == 7
    assert conf.config_file == [str(tmp_path / "placement.conf")]
    # named explicitly, the directory must hold placement.conf
    with pytest.raises(config.ConfigError,
                       match=r"^OS_PLACEMENT_CONFIG_DIR: no placement.conf in "):
        config.load({"OS_PLACEMENT_CONFIG_DIR": str(tmp_path / "elsewhere")})


def test_a_console_scripts_config_file_replaces_the_default_one(tmp_path):
    (tmp_path / "placement.conf").write_text("[placement]\nmax_allocation_candidates = 7\n")
    other = tmp_path / "other.conf"
    other.write_text("[placement]\nrandomize_allocation_candidates = true\n")
    conf = config.load({"OS_PLACEMENT_CONFIG_DIR": str(tmp_path)},
                       args=["--config-file", str(other)])
    assert conf.config_file == [str(other)]
    assert conf.placement.max_allocation_candidates == -1
    assert conf.placement.randomize_allocation_candidates is True


def test_a_missing_config_file_is_an_error(tmp_path):
    with pytest.raises(config.ConfigError, match="PLACEMENT_CONFIG_FILE: no such file"):
        config.load({"PLACEMENT_CONFIG_FILE": str(tmp_path / "nowhere.conf")})


def test_the_secret_key_is_generated_once_per_installation(tmp_path):
    conf = config.load({})
    first = config.secret_key(conf, tmp_path)
    assert len(first) > 40
    assert config.secret_key(conf, tmp_path) == first
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0
    assert config.secret_key(config.load({}), tmp_path / "other") != first
    assert config.secret_key(config.load({"SECRET_KEY": "given"}), tmp_path) == "given"


def test_config_sample_is_a_valid_file_with_every_section(tmp_path, capsys):
    call_command("config_sample")
    sample = capsys.readouterr().out
    for section in ("[api]", "[placement_database]", "[placement]", "[oslo_policy]",
                    "[cors]", "[keystone_authtoken]"):
        assert section in sample
    assert "#max_allocation_candidates = -1" in sample
    assert "#enforce_new_defaults = True" in sample
    config.load(write_conf(tmp_path, sample))  # commented out: parses to the defaults


def test_policy_sample_lists_every_rule_commented(capsys):
    import yaml

    from foundation.api.policy import ENDPOINT_RULES

    call_command("policy_sample")
    sample = capsys.readouterr().out
    uncommented = "\n".join(line[1:] for line in sample.splitlines()
                            if line.startswith('#"'))
    rules = yaml.safe_load(uncommented)
    assert rules["placement:reshaper:reshape"] == "rule:service_api"
    assert set(ENDPOINT_RULES) <= set(rules)
    assert yaml.safe_load(sample) is None  # all commented out


# --- Host header and page headers ---------------------------------------------------

@pytest.mark.parametrize("host", ["placement_api:8778", "placement_api", "10.0.0.5:8778",
                                  "placement.example.com"])
def test_the_api_serves_any_host(api, settings, host):
    settings.ALLOWED_HOSTS = ["ui.example.com"]
    root = api.get("/", headers={"Host": host})
    assert root.status_code == 200 and root["Content-Type"] == "application/json"
    created = api.post("/resource_providers", {"name": f"rp-{host}"}, version="1.10",
                       headers={"Host": host})
    assert created.status_code == 201
    assert created["Location"].startswith(f"http://{host}/resource_providers/")
    assert "X-Frame-Options" not in created


def test_ui_keeps_djangos_host_check(api, settings):
    settings.ALLOWED_HOSTS = ["ui.example.com"]
    assert api.get("/ui/", headers={"Host": "placement_api:8778"}).status_code == 400
    assert api.get("/ui/", headers={"Host": "evil.example.com"}).status_code == 400


@pytest.mark.parametrize("path", ["/ui/", "/admin/login/"])
def test_pages_forbid_framing_and_foreign_scripts(api, path):
    response = api.get(path, token="")
    assert response["X-Frame-Options"] == "DENY"
    policy = response["Content-Security-Policy"]
    assert "script-src 'self';" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]


@pytest.mark.parametrize("url", [
    "mysql+pymysql://placement:s%40cret@controller/placement?charset=utf8",
    "mysql://placement:s%40cret@controller:3307/placement",
    "mysql+pymysql://placement:s%40cret@/placement?unix_socket=/run/mysqld/mysqld.sock"
    "&charset=utf8&plugin=dbcounter",
])
def test_placement_mysql_connection_lines_are_accepted(tmp_path, url):
    from foundation.mysql.url import database_entry

    conf = config.load(write_conf(tmp_path, f"[placement_database]\nconnection = {url}\n"))
    entry = database_entry(conf.placement_database.connection, 60)
    assert (entry["ENGINE"], entry["NAME"], entry["USER"], entry["PASSWORD"]) == (
        "foundation.mysql", "placement", "placement", "s@cret")
    assert entry["OPTIONS"]["charset"] == "utf8mb4"   # whatever charset= said
    assert "TRADITIONAL" in entry["OPTIONS"]["init_command"]
    if "unix_socket" in url:
        assert (entry["HOST"], entry["OPTIONS"]["unix_socket"]) == (
            "", "/run/mysqld/mysqld.sock")
    else:
        assert entry["HOST"] == "controller" and "unix_socket" not in entry["OPTIONS"]
