"""Building the plugin manager: defaults, entry points, plugins in code, validation, tracing, ordering."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pluggy
import pytest
import toolmesh
import toolmesh._pipeline.default_validation
from toolmesh import ConfigError, hookimpl
from toolmesh._pipeline.memory_cache import MemoryCachePlugin
from toolmesh._pipeline.plugin_manager import (
    ENTRY_POINT_GROUP,
    PLUGINS_ENV,
    TRACE_ENV,
    await_maybe,
    create_plugin_manager,
    describe_plugins,
    ordered_impls,
)

_DEFAULTS = ["toolmesh.default_validation", "toolmesh.memory_cache", "toolmesh.authorization"]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PLUGINS_ENV, raising=False)
    monkeypatch.delenv(TRACE_ENV, raising=False)


class Claims:
    @hookimpl
    def toolmesh_claim_sources(self, sources: list[str]) -> list[str]:
        return [source for source in sources if source.endswith(".claim")]


def test_default_plugins_are_registered() -> None:
    """Schema validation and the memory cache are registered by default, under stable names."""
    pm = create_plugin_manager(load_entrypoints=False)
    assert pm.get_plugin("toolmesh.default_validation") is toolmesh._pipeline.default_validation
    assert isinstance(pm.get_plugin("toolmesh.memory_cache"), MemoryCachePlugin)
    assert [name for name, _ in pm.list_name_plugin()] == _DEFAULTS


def test_each_manager_gets_its_own_cache() -> None:
    """Two plugin managers never share a memory cache."""
    first = create_plugin_manager(load_entrypoints=False).get_plugin("toolmesh.memory_cache")
    second = create_plugin_manager(load_entrypoints=False).get_plugin("toolmesh.memory_cache")
    assert first.cache is not second.cache


def test_plugin_in_code_is_registered() -> None:
    """A plugin passed in code is registered after the defaults and its hooks are called."""
    plugin = Claims()
    pm = create_plugin_manager([plugin], load_entrypoints=False)
    assert pm.is_registered(plugin)
    assert [name for name, _ in pm.list_name_plugin()][: len(_DEFAULTS)] == _DEFAULTS
    assert pm.hook.toolmesh_claim_sources(sources=["a.claim", "b.other"]) == [["a.claim"]]


def test_same_plugin_twice_is_registered_once() -> None:
    """Passing one plugin object twice does not fail or register it twice."""
    plugin = Claims()
    pm = create_plugin_manager([plugin, plugin], load_entrypoints=False)
    assert pm.hook.toolmesh_claim_sources(sources=["x.claim"]) == [["x.claim"]]


def test_unknown_hook_name_fails_at_creation() -> None:
    """A hookimpl whose name is no toolmesh hook fails creation instead of being ignored."""

    class Misspelt:
        @hookimpl
        def toolmesh_befor_call(self) -> None:
            return None

    with pytest.raises(pluggy.PluginValidationError, match="toolmesh_befor_call"):
        create_plugin_manager([Misspelt()], load_entrypoints=False)


def test_unknown_argument_fails_at_creation() -> None:
    """A hookimpl asking for a parameter its hook does not have is refused at creation."""

    class WrongArgs:
        @hookimpl
        def toolmesh_before_call(self, argumentz: dict[str, Any]) -> None:
            return None

    with pytest.raises(pluggy.PluginValidationError, match="argumentz"):
        create_plugin_manager([WrongArgs()], load_entrypoints=False)


def test_env_limits_entry_point_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """TOOLMESH_PLUGINS=python loads the python plugin and blocks sandbox."""
    monkeypatch.setenv(PLUGINS_ENV, "python")
    pm = create_plugin_manager()
    assert pm.get_plugin("python") is not None
    assert pm.get_plugin("sandbox") is None
    assert pm.is_blocked("sandbox")


def test_env_names_are_trimmed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spaces and empty items in TOOLMESH_PLUGINS are ignored."""
    monkeypatch.setenv(PLUGINS_ENV, " python , ,")
    pm = create_plugin_manager()
    assert pm.get_plugin("python") is not None
    assert pm.is_blocked("sandbox")


def test_empty_env_loads_no_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty TOOLMESH_PLUGINS loads no installed plugin, only the defaults."""
    monkeypatch.setenv(PLUGINS_ENV, "")
    pm = create_plugin_manager()
    assert [name for name, plugin in pm.list_name_plugin() if plugin is not None] == _DEFAULTS


def test_unknown_plugin_name_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unknown TOOLMESH_PLUGINS name is a ConfigError naming it and the installed plugins."""
    monkeypatch.setenv(PLUGINS_ENV, "python,nosuchplugin")
    with pytest.raises(ConfigError, match="nosuchplugin") as caught:
        create_plugin_manager()
    assert "python" in str(caught.value) and PLUGINS_ENV in str(caught.value)


def test_entry_points_ignored_when_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    """load_entrypoints=False ignores TOOLMESH_PLUGINS entirely, even a bad name."""
    monkeypatch.setenv(PLUGINS_ENV, "nosuchplugin")
    pm = create_plugin_manager(load_entrypoints=False)
    assert pm.get_plugin("python") is None


@pytest.fixture
def hooks_logger(monkeypatch: pytest.MonkeyPatch) -> logging.Logger:
    """The toolmesh.hooks logger, with its handlers and level restored after the test."""
    logger = logging.getLogger("toolmesh.hooks")
    monkeypatch.setattr(logger, "handlers", [])
    level = logger.level
    yield logger
    logger.setLevel(level)


def test_trace_env_logs_hook_calls(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, hooks_logger: logging.Logger
) -> None:
    """TOOLMESH_TRACE_HOOKS=1 logs each hook call with its arguments and its result."""
    monkeypatch.setenv(TRACE_ENV, "1")
    pm = create_plugin_manager([Claims()], load_entrypoints=False)
    with caplog.at_level(logging.DEBUG, logger="toolmesh.hooks"):
        pm.hook.toolmesh_claim_sources(sources=["a.claim"])
    messages = [record.getMessage() for record in caplog.records if record.name == "toolmesh.hooks"]
    assert len(messages) == 2
    assert messages[0].startswith("call toolmesh_claim_sources") and "a.claim" in messages[0]
    assert messages[1].startswith("done toolmesh_claim_sources") and "[['a.claim']]" in messages[1]


def test_trace_logs_raising_hooks(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, hooks_logger: logging.Logger
) -> None:
    """A traced hook that raises is logged with the exception."""

    class Broken:
        @hookimpl
        def toolmesh_claim_sources(self) -> None:
            raise RuntimeError("bad plugin")

    monkeypatch.setenv(TRACE_ENV, "1")
    pm = create_plugin_manager([Broken()], load_entrypoints=False)
    with caplog.at_level(logging.DEBUG, logger="toolmesh.hooks"), pytest.raises(RuntimeError):
        pm.hook.toolmesh_claim_sources(sources=[])
    assert any("raised RuntimeError('bad plugin')" in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize("value", ["", "0"])
def test_no_tracing_by_default(
    value: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    hooks_logger: logging.Logger,
) -> None:
    """Without TOOLMESH_TRACE_HOOKS (or with 0) hook calls are not logged."""
    monkeypatch.setenv(TRACE_ENV, value)
    pm = create_plugin_manager([Claims()], load_entrypoints=False)
    with caplog.at_level(logging.DEBUG, logger="toolmesh.hooks"):
        pm.hook.toolmesh_claim_sources(sources=["a.claim"])
    assert [record for record in caplog.records if record.name == "toolmesh.hooks"] == []


async def _seven() -> int:
    return 7


@pytest.mark.anyio
async def test_await_maybe() -> None:
    """await_maybe awaits coroutines and futures and returns plain values unchanged."""
    future = asyncio.get_running_loop().create_future()
    future.set_result("done")
    plain = [1, 2]
    assert await await_maybe(_seven()) == 7
    assert await await_maybe(future) == "done"
    assert await await_maybe(plain) is plain
    assert await await_maybe(None) is None


def _named(name: str, **marks: bool) -> object:
    class Plugin:
        @hookimpl(**marks)
        def toolmesh_before_call(self) -> None:
            return None

    Plugin.__name__ = name
    return Plugin()


def test_ordered_impls_honours_tryfirst_trylast_and_registration() -> None:
    """Pipeline order is tryfirst impls, then registration order, then trylast impls."""
    plugins = {
        "plain1": _named("plain1"),
        "late1": _named("late1", trylast=True),
        "first1": _named("first1", tryfirst=True),
        "plain2": _named("plain2"),
        "first2": _named("first2", tryfirst=True),
        "late2": _named("late2", trylast=True),
        "plain3": _named("plain3"),
    }
    pm = create_plugin_manager(load_entrypoints=False)
    for name, plugin in plugins.items():
        pm.register(plugin, name=name)
    order = [impl.plugin_name for impl in ordered_impls(pm.hook.toolmesh_before_call)]
    assert order == ["first1", "first2", "plain1", "plain2", "plain3", "late1", "late2"]


def test_describe_plugins_in_code() -> None:
    """describe_plugins lists every plugin in registration order with its sorted hooks and no distribution."""
    plugin = Claims()
    pm = create_plugin_manager([plugin], load_entrypoints=False)
    pm.register(_named("decider"), name="decider")
    infos = describe_plugins(pm)
    assert [info.name for info in infos] == [*_DEFAULTS, pm.get_name(plugin), "decider"]
    by_name = {info.name: info for info in infos}
    assert by_name["toolmesh.default_validation"].hooks == (
        "toolmesh_validate_arguments",
        "toolmesh_validate_result",
    )
    assert by_name["toolmesh.memory_cache"].hooks == (
        "toolmesh_cache_get",
        "toolmesh_cache_key",
        "toolmesh_cache_put",
    )
    assert by_name["decider"].hooks == ("toolmesh_before_call",)
    assert all(info.distribution is None and info.version is None for info in infos)


def test_describe_plugins_names_distribution_and_skips_blocked(monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry-point plugin shows its distribution and version; a blocked one is not listed."""
    monkeypatch.setenv(PLUGINS_ENV, "python")
    infos = {info.name: info for info in describe_plugins(create_plugin_manager())}
    assert "sandbox" not in infos
    assert infos["python"].distribution == "toolmesh"
    assert infos["python"].version == toolmesh.__version__


def test_entry_point_group_name() -> None:
    """Installed plugins register in the 'toolmesh.plugins' entry-point group."""
    assert ENTRY_POINT_GROUP == "toolmesh.plugins"
