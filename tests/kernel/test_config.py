"""Settings: CLI flags > TOOLMESH_* environment > toolmesh.toml, with every bad value refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest
from toolmesh import ConfigError, Settings, load_settings
from toolmesh._config import CONFIG_FILE, DEFAULT_NATS_URL


@pytest.fixture
def toml(tmp_path: Path) -> Path:
    return tmp_path / "toolmesh.toml"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_any_source(tmp_path: Path) -> None:
    """With no file, no environment and no flags, the documented defaults apply."""
    settings = load_settings(env={}, config_file=tmp_path / "absent.toml")
    assert settings == Settings()
    assert (settings.port, settings.prefix, settings.heartbeat, settings.catalog_ttl) == (
        4222,
        "tool",
        2.0,
        6.0,
    )
    assert settings.connect_url == DEFAULT_NATS_URL
    assert settings.plugins == {}


@pytest.mark.parametrize(
    ("in_file", "in_env", "flag", "expected"),
    [
        (True, True, True, 3000),
        (True, True, False, 2000),
        (True, False, True, 3000),
        (True, False, False, 1000),
        (False, True, False, 2000),
        (False, False, False, 4222),
    ],
)
def test_precedence_flags_env_file(
    toml: Path, in_file: bool, in_env: bool, flag: bool, expected: int
) -> None:
    """A flag beats TOOLMESH_PORT, which beats toolmesh.toml, which beats the default."""
    write(toml, "port = 1000\n" if in_file else "")
    env = {"TOOLMESH_PORT": "2000"} if in_env else {}
    overrides = {"port": 3000} if flag else None
    assert load_settings(overrides, env=env, config_file=toml).port == expected


def test_sources_merge_per_key(toml: Path) -> None:
    """Each setting comes from the strongest source that names it; the others keep theirs."""
    write(toml, 'prefix = "fromfile"\nheartbeat = 1.0\ncatalog_ttl = 3.0\n')
    settings = load_settings({"node_name": "flag-node"}, env={"TOOLMESH_HEARTBEAT": "0.5"}, config_file=toml)
    assert (settings.prefix, settings.heartbeat, settings.catalog_ttl, settings.node_name) == (
        "fromfile",
        0.5,
        3.0,
        "flag-node",
    )


def test_none_flags_are_ignored(toml: Path) -> None:
    """A flag given as None (not passed on the command line) does not hide the file or env value."""
    write(toml, "max_concurrency = 8\n")
    settings = load_settings(
        {"max_concurrency": None, "port": None}, env={"TOOLMESH_PORT": "5000"}, config_file=toml
    )
    assert (settings.max_concurrency, settings.port) == (8, 5000)


def test_empty_env_value_is_ignored(toml: Path) -> None:
    """TOOLMESH_X set to the empty string counts as unset."""
    write(toml, "port = 1234\n")
    assert load_settings(env={"TOOLMESH_PORT": ""}, config_file=toml).port == 1234


@pytest.mark.parametrize(
    ("variable", "raw", "field", "value"),
    [
        ("TOOLMESH_EVENTS", "false", "events", False),
        ("TOOLMESH_EVENTS", "true", "events", True),
        ("TOOLMESH_DEFAULT_TIMEOUT", "2.5", "default_timeout", 2.5),
        ("TOOLMESH_MAX_PAYLOAD", "4096", "max_payload", 4096),
        ("TOOLMESH_NATS_URL", "nats://10.0.0.1:4222", "nats_url", "nats://10.0.0.1:4222"),
        ("TOOLMESH_PREFIX", "acme.tools", "prefix", "acme.tools"),
    ],
)
def test_env_strings_are_converted(
    tmp_path: Path, variable: str, raw: str, field: str, value: object
) -> None:
    """Environment strings are converted to each setting's type."""
    settings = load_settings(env={variable: raw}, config_file=tmp_path / "absent.toml")
    assert getattr(settings, field) == value


def test_unrelated_env_is_not_a_setting(tmp_path: Path) -> None:
    """TOOLMESH_PLUGINS and other non-setting variables never land in Settings."""
    settings = load_settings(
        env={"TOOLMESH_PLUGINS": "python", "TOOLMESH_TRACE_HOOKS": "1"}, config_file=tmp_path / "absent.toml"
    )
    assert settings == Settings()


def test_plugin_tables_land_in_settings_plugins(toml: Path) -> None:
    """TOML tables belong to plugins and are kept, nested, in Settings.plugins."""
    write(
        toml,
        'port = 4300\n[mcp.servers.github]\ncommand = "gh-mcp"\nargs = ["--ro"]\n[rune]\nfuel = 1000\n',
    )
    settings = load_settings(env={}, config_file=toml)
    assert settings.port == 4300
    assert settings.plugins == {
        "mcp": {"servers": {"github": {"command": "gh-mcp", "args": ["--ro"]}}},
        "rune": {"fuel": 1000},
    }


def test_config_file_from_env(tmp_path: Path) -> None:
    """TOOLMESH_CONFIG names the file to read when none is passed."""
    path = write(tmp_path / "other.toml", "port = 4444\n")
    assert load_settings(env={"TOOLMESH_CONFIG": str(path)}).port == 4444


def test_default_file_is_toolmesh_toml_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without TOOLMESH_CONFIG, ./toolmesh.toml is read."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / CONFIG_FILE, "port = 4555\n")
    assert load_settings(env={}).port == 4555


def test_missing_config_named_by_env_is_an_error(tmp_path: Path) -> None:
    """TOOLMESH_CONFIG naming no file is a ConfigError naming the path."""
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match="nope.toml"):
        load_settings(env={"TOOLMESH_CONFIG": str(missing)})


def test_empty_config_env_counts_as_unset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """TOOLMESH_CONFIG set to the empty string falls back to ./toolmesh.toml, like any empty TOOLMESH_X."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / CONFIG_FILE, "port = 4666\n")
    assert load_settings(env={"TOOLMESH_CONFIG": ""}).port == 4666


def test_invalid_toml_is_an_error(toml: Path) -> None:
    """A file that is not TOML is a ConfigError naming the file."""
    write(toml, "port = = 3\n")
    with pytest.raises(ConfigError, match="toolmesh.toml"):
        load_settings(env={}, config_file=toml)


def test_unknown_key_is_an_error(toml: Path) -> None:
    """An unknown top-level key in the file is a ConfigError naming it."""
    write(toml, "port = 4222\ncolour = 'red'\n")
    with pytest.raises(ConfigError, match="colour"):
        load_settings(env={}, config_file=toml)


def test_unknown_flag_is_an_error(tmp_path: Path) -> None:
    """An override that is no setting is a ConfigError naming it."""
    with pytest.raises(ConfigError, match="colour"):
        load_settings({"colour": "red"}, env={}, config_file=tmp_path / "absent.toml")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('port = "abc"\n', "port"),
        ("events = 3\n", "events"),
        ("max_payload = 1.5\n", "max_payload"),
        ("[port]\nvalue = 1\n", "port"),
    ],
)
def test_bad_value_in_file_is_an_error(toml: Path, text: str, key: str) -> None:
    """A value of the wrong type in the file is a ConfigError naming the key."""
    write(toml, text)
    with pytest.raises(ConfigError, match=key):
        load_settings(env={}, config_file=toml)


@pytest.mark.parametrize(
    ("variable", "raw", "key"),
    [
        ("TOOLMESH_PORT", "abc", "port"),
        ("TOOLMESH_PORT", "70000", "port"),
        ("TOOLMESH_PORT", "-1", "port"),
        ("TOOLMESH_MAX_CONCURRENCY", "0", "max_concurrency"),
        ("TOOLMESH_MAX_PAYLOAD", "100", "max_payload"),
        ("TOOLMESH_DEFAULT_TIMEOUT", "0", "default_timeout"),
        ("TOOLMESH_HEARTBEAT", "-2", "heartbeat"),
        ("TOOLMESH_EVENTS", "maybe", "events"),
        ("TOOLMESH_PREFIX", "bad prefix", "prefix"),
        ("TOOLMESH_PREFIX", "tool.>", "prefix"),
        # the node name is a catalog key and a subject token: nats.py refused it only at the first heartbeat
        ("TOOLMESH_NODE_NAME", "edge[x]", "node_name"),
        ("TOOLMESH_NODE_NAME", "a.b", "node_name"),
    ],
)
def test_bad_value_in_env_is_an_error(tmp_path: Path, variable: str, raw: str, key: str) -> None:
    """A bad environment value is a ConfigError naming the setting."""
    with pytest.raises(ConfigError, match=key):
        load_settings(env={variable: raw}, config_file=tmp_path / "absent.toml")


@pytest.mark.parametrize(("heartbeat", "ttl"), [(2.0, 2.0), (5.0, 1.0)])
def test_catalog_ttl_must_exceed_heartbeat(tmp_path: Path, heartbeat: float, ttl: float) -> None:
    """A catalog TTL not longer than the heartbeat would drop live nodes, so it is refused."""
    with pytest.raises(ConfigError, match="catalog_ttl"):
        load_settings(
            {"heartbeat": heartbeat, "catalog_ttl": ttl}, env={}, config_file=tmp_path / "absent.toml"
        )


@pytest.mark.parametrize(
    ("field", "value"),
    [("prefix", "bad prefix"), ("port", 70000), ("max_concurrency", 0), ("heartbeat", 0.0)],
)
def test_direct_construction_raises_config_error(field: str, value: object) -> None:
    """Settings(...) refuses a bad value with a ConfigError naming the setting, as load_settings does."""
    with pytest.raises(ConfigError, match=field):
        Settings(**{field: value})


def test_settings_subjects_follow_prefix() -> None:
    """Settings.subjects uses the configured prefix."""
    assert Settings(prefix="acme").subjects.request("add") == "acme.request.add"


@pytest.mark.parametrize(
    ("nats_url", "port", "url"),
    [(None, 4300, "nats://127.0.0.1:4300"), ("nats://mesh:4222", 4300, "nats://mesh:4222")],
)
def test_connect_url(nats_url: str | None, port: int, url: str) -> None:
    """Clients use the configured NATS URL, else the local broker on the configured port."""
    assert Settings(nats_url=nats_url, port=port).connect_url == url
