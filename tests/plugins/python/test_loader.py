"""Finding tools: which sources are claimed, and loading modules, files, directories and entry points."""

from __future__ import annotations

import sys
import textwrap
import uuid
from pathlib import Path

import pytest
import toolmesh
from toolmesh.plugins.python import toolmesh_claim_sources
from toolmesh.plugins.python.loader import claims, entry_point_tools, tools_from

from .conftest import TOOLS, InstallEntryPoints, WritePackage

EXAMPLES = Path(__file__).parents[3] / "examples"


def _names(tools: list[toolmesh.ToolFunction]) -> list[str]:
    return sorted(tool.name for tool in tools)


@pytest.mark.parametrize(
    ("source", "claimed"),
    [
        pytest.param("package.module:attribute", True, id="module-attr"),
        pytest.param("package.module:holder.attribute", True, id="module-dotted-attr"),
        pytest.param("json", True, id="importable-module"),
        pytest.param("toolmesh.plugins.python", True, id="importable-dotted-module"),
        pytest.param("no_such_module_anywhere", False, id="missing-module"),
        pytest.param("no_such_package.module", False, id="missing-package"),
        pytest.param("examples/math_tools.py", True, id="py-file"),
        pytest.param("missing/tools.py", True, id="missing-py-file"),
        pytest.param("http://127.0.0.1:4222", False, id="url"),
        pytest.param("C:\\tools", False, id="windows-path"),
        pytest.param("scripts/add.rn", False, id="rune-file"),
        pytest.param("import:thing", False, id="keyword"),
        pytest.param("", False, id="empty"),
    ],
)
def test_claims(source: str, claimed: bool) -> None:
    assert claims(source) is claimed


def test_claims_any_existing_directory(tmp_path: Path) -> None:
    assert toolmesh_claim_sources([str(tmp_path), str(tmp_path / "absent"), "x.rn"]) == [str(tmp_path)]


def test_module_attribute(write_package: WritePackage) -> None:
    package = write_package({"tools.py": TOOLS})
    assert _names(tools_from([f"{package}.tools:first"])) == ["first"]


def test_module_takes_every_tool_attribute(write_package: WritePackage) -> None:
    package = write_package({"tools.py": TOOLS})
    assert _names(tools_from([f"{package}.tools"])) == ["first", "second"]


def test_module_attribute_holding_a_list(write_package: WritePackage) -> None:
    package = write_package({"tools.py": TOOLS + "\nEXPORTED = [first]\n"})
    assert _names(tools_from([f"{package}.tools:EXPORTED"])) == ["first"]


def test_python_file(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(TOOLS)
    tools = tools_from([str(tmp_path / "tools.py")])
    assert _names(tools) == ["first", "second"]
    assert tools[0].function.__module__.startswith("toolmesh_tools_tools_")


def test_directory_loads_public_python_files_with_sibling_imports(tmp_path: Path) -> None:
    sibling = f"shared_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{sibling}.py").write_text("FACTOR = 3\n")
    (tmp_path / "scale.py").write_text(
        textwrap.dedent(f'''
            import toolmesh
            from {sibling} import FACTOR

            @toolmesh.tool
            def scale(a: int) -> int:
                """Scale a number."""
                return a * FACTOR
        ''')
    )
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "_private.py").write_text("raise RuntimeError('never imported')\n")
    (tmp_path / "notes.txt").write_text("not python")
    path_before = list(sys.path)
    try:
        tools = tools_from([str(tmp_path)])
    finally:
        sys.modules.pop(sibling, None)
    assert _names(tools) == ["first", "scale", "second"]
    assert sys.path == path_before  # the folder was on sys.path only while importing
    assert next(tool for tool in tools if tool.name == "scale")(2) == 6


def test_directory_loads_packages_in_it_recursively(tmp_path: Path) -> None:
    package = tmp_path / "kit"
    (package / "deep").mkdir(parents=True)
    (package / "__init__.py").write_text("from .tools import first\n")
    (package / "tools.py").write_text(
        TOOLS.replace("return a", "return a + OFFSET") + "\nfrom .numbers import OFFSET\n"
    )
    (package / "numbers.py").write_text("OFFSET = 100\n")
    (package / "_private.py").write_text("raise RuntimeError('never imported')\n")
    (package / "deep" / "__init__.py").write_text("")
    (package / "deep" / "more.py").write_text(
        "import toolmesh\n\n@toolmesh.tool\ndef third() -> int:\n    return 3\n"
    )
    (tmp_path / "plain_folder").mkdir()  # no __init__.py: not a package, not imported
    (tmp_path / "plain_folder" / "boom.py").write_text("raise RuntimeError('never imported')\n")
    tools = tools_from([str(tmp_path)])
    assert set(_names(tools)) == {"first", "second", "third"}
    assert next(tool for tool in tools if tool.name == "first")(1) == 101
    (package / "numbers.py").write_text("OFFSET = 200\n")
    reloaded = tools_from([str(tmp_path)])
    assert next(tool for tool in reloaded if tool.name == "first")(1) == 201  # edits show on rediscovery


def test_broken_module_in_a_package_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "kit").mkdir()
    (tmp_path / "kit" / "__init__.py").write_text("")
    (tmp_path / "kit" / "bad.py").write_text("import no_such_module_anywhere\n")
    with pytest.raises(toolmesh.ToolDefinitionError, match=r"kit/bad\.py: ModuleNotFoundError"):
        tools_from([str(tmp_path)])


def test_same_file_name_in_two_folders_are_two_modules(tmp_path: Path) -> None:
    for folder, value in (("one", 1), ("two", 2)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "tools.py").write_text(
            "import toolmesh\n\n"
            f"@toolmesh.tool(name='value_{folder}')\ndef value() -> int:\n    return {value}\n"
        )
    tools = tools_from([str(tmp_path / "one" / "tools.py"), str(tmp_path / "two" / "tools.py")])
    assert [tool() for tool in tools] == [1, 2]


def test_objects_passed_in_code(write_package: WritePackage) -> None:
    import importlib

    package = write_package({"tools.py": TOOLS})
    module = importlib.import_module(f"{package}.tools")
    assert _names(tools_from([module.first])) == ["first"]
    assert _names(tools_from([[module.first, module._second_impl]])) == ["first", "second"]
    assert _names(tools_from([(module.first,)])) == ["first"]
    assert _names(tools_from([module])) == ["first", "second"]
    assert tools_from([42, "x.rn", "no_such_module_anywhere"]) == []  # not ours: ignored


@pytest.mark.parametrize(
    ("source_file", "words"),
    [
        pytest.param(
            "broken.py",
            ["cannot load tools from", "broken.py", "NameError", "undefined_name"],
            id="name-error",
        ),
        pytest.param("syntax.py", ["cannot load tools from", "syntax.py", "SyntaxError"], id="syntax-error"),
        pytest.param("absent.py", ["cannot load tools from", "absent.py", "no such file"], id="missing-file"),
        pytest.param("script.py", ["cannot load tools from", "script.py", "SystemExit: 3"], id="exits"),
    ],
)
def test_file_that_fails_to_load(tmp_path: Path, source_file: str, words: list[str]) -> None:
    (tmp_path / "broken.py").write_text("import toolmesh\n\nvalue = undefined_name + 1\n")
    (tmp_path / "syntax.py").write_text("def broken(:\n")
    (tmp_path / "script.py").write_text("import sys\n\nsys.exit(3)\n")
    with pytest.raises(toolmesh.ToolDefinitionError) as caught:
        tools_from([str(tmp_path / source_file)])
    for word in words:
        assert word in str(caught.value)
    assert not [name for name in sys.modules if name.startswith("toolmesh_tools_broken_")]


def test_directory_with_a_broken_file_names_that_file(tmp_path: Path) -> None:
    (tmp_path / "fine.py").write_text(TOOLS)
    (tmp_path / "zz_broken.py").write_text("raise ValueError('bad config')\n")
    with pytest.raises(toolmesh.ToolDefinitionError, match=r"zz_broken\.py: ValueError: bad config"):
        tools_from([str(tmp_path)])


@pytest.mark.parametrize(
    ("reference", "pattern"),
    [
        pytest.param(
            "{package}.absent:tool", r"cannot load tools from module '.*\.absent': ModuleNotFoundError"
        ),
        pytest.param("{package}.tools:absent", r"tools has no 'absent'"),
        pytest.param("{package}.tools:NOT_A_TOOL", r"NOT_A_TOOL is a int, not a @toolmesh.tool function"),
    ],
    ids=["missing-module", "missing-attribute", "not-a-tool"],
)
def test_bad_module_reference(write_package: WritePackage, reference: str, pattern: str) -> None:
    package = write_package({"tools.py": TOOLS})
    with pytest.raises(toolmesh.ToolDefinitionError, match=pattern):
        tools_from([reference.format(package=package)])


def test_entry_points_load_tools_lists_and_modules(
    install_entry_points: InstallEntryPoints, write_package: WritePackage
) -> None:
    package = write_package(
        {
            "tools.py": TOOLS,
            "more.py": "import toolmesh\n\n@toolmesh.tool\ndef third() -> int:\n    return 3\n\n"
            "ALL = [third]\n",
        }
    )
    install_entry_points(
        {"one": f"{package}.tools:first", "many": f"{package}.more:ALL", "module": f"{package}.tools"}
    )
    assert _names(entry_point_tools()) == ["first", "first", "second", "third"]


def test_entry_point_that_fails_to_load(install_entry_points: InstallEntryPoints) -> None:
    install_entry_points({"broken": "no_such_module_anywhere:tool"})
    with pytest.raises(
        toolmesh.ToolDefinitionError, match=r"entry point 'broken'.*ModuleNotFoundError.*entry_points"
    ):
        entry_point_tools()


def test_examples_load_as_a_directory() -> None:
    names = _names(tools_from([str(EXAMPLES)]))
    assert {
        "add",
        "divide",
        "statistics",
        "word_count",
        "slugify",
        "echo",
        "shout",
        "sleep",
        "bad_return",
        "wrong_output",
        "now",
    } <= set(names)
