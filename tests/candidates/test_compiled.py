"""The engine's compiled modules (candidates/compiled.py): built from the source as it is,
used only while that source is unchanged, and never when switched off."""
import subprocess
import sys
import textwrap

import pytest

from candidates import compiled


@pytest.fixture
def build_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(compiled, "BUILD_DIR", tmp_path)
    return tmp_path


def _fake_build(build_dir, name, digest):
    path = build_dir / name.replace(".", "/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_name(f"{path.name}{compiled.SUFFIX}").write_bytes(b"not really a module")
    path.with_name(f"{path.name}.sha256").write_text(digest)


def test_a_build_of_the_current_source_is_found(build_dir):
    _fake_build(build_dir, "combine", compiled.source_digest("combine"))
    spec = compiled.CompiledFinder().find_spec("candidates.combine")
    assert spec.origin == str(build_dir / f"combine{compiled.SUFFIX}")


def test_a_module_of_the_engine_package_is_found_by_its_dotted_name(build_dir):
    assert "engine.steps" in compiled.MODULES
    _fake_build(build_dir, "engine.steps", compiled.source_digest("engine.steps"))
    spec = compiled.CompiledFinder().find_spec("candidates.engine.steps")
    assert spec.origin == str(build_dir / "engine" / f"steps{compiled.SUFFIX}")
    assert spec.name == "candidates.engine.steps"
    assert compiled.CompiledFinder().find_spec("candidates.engine") is None


def test_a_build_of_an_older_source_is_ignored(build_dir):
    _fake_build(build_dir, "combine", "0" * 64)
    assert compiled.CompiledFinder().find_spec("candidates.combine") is None
    assert not compiled.is_current("combine")


def test_no_build_and_other_modules_are_left_to_python(build_dir):
    assert compiled.CompiledFinder().find_spec("candidates.combine") is None
    _fake_build(build_dir, "request", compiled.source_digest("request"))
    assert compiled.CompiledFinder().find_spec("candidates.request") is None


@pytest.mark.parametrize("enabled", [True, False])
def test_the_setting_alone_decides_whether_builds_are_looked_for(enabled, settings,
                                                                 monkeypatch):
    from django.apps import apps

    monkeypatch.setattr(sys, "meta_path", [finder for finder in sys.meta_path
                                           if not isinstance(finder, compiled.CompiledFinder)])
    settings.PLACEMENT_COMPILED_ENGINE = enabled
    apps.get_app_config("candidates").ready()
    installed = [f for f in sys.meta_path if isinstance(f, compiled.CompiledFinder)]
    assert len(installed) == (1 if enabled else 0)


def test_the_builds_live_in_the_package_not_in_a_virtual_environment():
    assert compiled.BUILD_DIR == compiled.PACKAGE_DIR / "_compiled"


def test_build_compiles_a_module_that_is_then_imported(tmp_path):
    # A real Cython build of one module (a copy of combine.py, in a project directory of
    # its own), in a fresh process; then the copy is edited and built again; then a
    # module of a package within candidates (as engine.steps is) is built beside it.
    script = textwrap.dedent(f"""
        import importlib.util, os, shutil, sys
        from pathlib import Path
        sys.path.insert(0, {str(compiled.PROJECT_DIR)!r})
        from candidates import compiled
        project = Path({str(tmp_path)!r}) / "project"
        (project / "candidates").mkdir(parents=True)
        shutil.copy(compiled.PACKAGE_DIR / "combine.py", project / "candidates")
        compiled.PROJECT_DIR, compiled.PACKAGE_DIR = project, project / "candidates"
        compiled.BUILD_DIR = Path({str(tmp_path)!r}) / "build"
        compiled.MODULES = ("combine",)
        compiled.CompiledFinder.names = {{"candidates.combine": "combine"}}
        compiled.install()
        print(compiled.build())
        print(compiled.build())
        first = os.stat(compiled._built("combine")).st_ino
        with open(project / "candidates" / "combine.py", "a") as source:
            source.write("# edited\\n")
        print(compiled.is_current("combine"))
        print(compiled.build())
        # a new file, not the loaded one rewritten in place
        print(os.stat(compiled._built("combine")).st_ino != first)
        from candidates import combine
        print(compiled.in_use())
        position = {{1: (7, 1, 6), 2: (7, 2, 3), 3: (8, 1, 2)}}
        print(combine.same_subtree_ok((1, 2), position), combine.same_subtree_ok((2, 3), position))
        package = project / "candidates" / "engine"
        package.mkdir()
        (package / "__init__.py").write_text("")
        (package / "tiny.py").write_text("def double(n):\\n    return 2 * n\\n")
        compiled.MODULES = ("combine", "engine.tiny")
        compiled.CompiledFinder.names = {{f"candidates.{{n}}": n for n in compiled.MODULES}}
        print(compiled.build())
        spec = compiled.CompiledFinder().find_spec("candidates.engine.tiny")
        tiny = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(tiny)
        print(tiny.double(21), tiny.__file__.endswith(compiled.SUFFIX))
        print(sorted(os.listdir(compiled.BUILD_DIR)))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=900)   # two real builds; slow on a loaded machine
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "compiled engine: built combine",
        "compiled engine: up to date (combine)",
        "False",
        "compiled engine: built combine",
        "True",
        "['combine']",
        "True False",
        "compiled engine: built engine.tiny",
        "42 True",
        f"['combine{compiled.SUFFIX}', 'combine.sha256', 'engine']",  # no temporary left
    ]
