"""The engine's pure modules, compiled by Cython, used when built from exactly this source.

The modules named in MODULES (names within the candidates package; "engine.steps" is
candidates/engine/steps.py) are plain Python and stay the only source: Cython compiles
them unchanged (no annotations) into extension modules under BUILD_DIR, which spend
fewer instructions on a large answer than the interpreter does.
The builds are part of the package: building the wheel compiles them (setup.py), and in a
checkout scripts/compile-engine (scripts/bootstrap runs it) compiles those whose source
changed since their last build, both with build() below. It needs Cython and a C
compiler; when either is missing it says so in one line and the plain modules serve.

One setting selects the form: with PLACEMENT_COMPILED_ENGINE (placement.conf [django]
compiled_engine) true, the app's ready() installs a finder before Python's own, which
loads a module's build only if the SHA-256 of the source it was built from (kept beside
it) is that of the .py file now, so an edited module is never shadowed by an old build;
false imports the plain modules whatever is built. The CI runs the suite once each way.
"""
import contextlib
import hashlib
import importlib.machinery
import importlib.util
import io
import os
import shutil
import sys
import tempfile
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = PACKAGE_DIR.parent
# Inside the package: the wheel carries its builds, a checkout keeps them (git ignores it).
BUILD_DIR = PACKAGE_DIR / "_compiled"
# engine/__init__.py (orchestration, once per request) stays plain: a compiled package
# __init__ would need a finder of its own for the package's path.
MODULES = ("candidate_set", "combine", "search", "present", "engine.steps", "engine.batches",
           "engine.facts", "engine.summaries")
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def _path(name):
    """"engine.steps" -> "engine/steps": module `name`'s path within the package."""
    return name.replace(".", "/")


def source_digest(name):
    return hashlib.sha256((PACKAGE_DIR / f"{_path(name)}.py").read_bytes()).hexdigest()


def _built(name, into=None):
    return (into or BUILD_DIR) / f"{_path(name)}{SUFFIX}"


def _stamp(name, into=None):
    return (into or BUILD_DIR) / f"{_path(name)}.sha256"


def is_current(name, into=None):
    """Is there a build of module `name` made from its source as it is now?"""
    try:
        return (_built(name, into).exists()
                and _stamp(name, into).read_text() == source_digest(name))
    except OSError:
        return False


class CompiledFinder:
    """Finds the current build of candidates.<one of MODULES>; anything else (or a build
    that is missing or stale) is left to Python's own finders."""

    names = {f"candidates.{name}": name for name in MODULES}

    def find_spec(self, fullname, path=None, target=None):
        name = self.names.get(fullname)
        if name is None or not is_current(name):
            return None
        return importlib.util.spec_from_file_location(fullname, _built(name))


def install():
    if not any(isinstance(finder, CompiledFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, CompiledFinder())


def in_use():
    """The names of MODULES imported in their compiled form in this process."""
    return [name for name in MODULES
            if getattr(sys.modules.get(f"candidates.{name}"), "__file__", "").endswith(SUFFIX)]


def build(into=None):
    """Compile every module of MODULES whose build in `into` (default BUILD_DIR) is not
    current; return a one-line report. Raises RuntimeError (one line) when Cython or the
    compiler fails."""
    into = into or BUILD_DIR
    stale = [name for name in MODULES if not is_current(name, into)]
    if not stale:
        return f"compiled engine: up to date ({', '.join(MODULES)})"
    try:
        from Cython.Build import cythonize
        from setuptools import Distribution, Extension
        from setuptools.command.build_ext import build_ext
    except ImportError as exc:
        raise RuntimeError(f"cannot compile the engine ({exc}); plain Python is used") from None
    digests = {name: source_digest(name) for name in stale}
    into.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix="build-", dir=into))
    # Relative source paths: tracebacks name candidates/<module>.py, found on sys.path.
    extensions = [Extension(f"candidates.{name}", [f"candidates/{_path(name)}.py"])
                  for name in stale]
    cwd = os.getcwd()
    log = io.StringIO()
    try:
        os.chdir(PROJECT_DIR)
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            command = build_ext(Distribution({"ext_modules": cythonize(
                extensions, build_dir=str(temp), language_level=3, quiet=True)}))
            command.build_lib, command.build_temp = str(temp / "lib"), str(temp)
            command.parallel = os.cpu_count() or 1
            command.ensure_finalized()
            command.run()
        for name, digest in digests.items():
            _built(name, into).parent.mkdir(parents=True, exist_ok=True)
            # Moved in as new files, the module before its stamp: a running server keeps
            # the build it loaded, and no process pairs the new stamp with the old build.
            os.replace(temp / "lib" / "candidates" / f"{_path(name)}{SUFFIX}",
                       _built(name, into))
            stamp = temp / f"{name}.sha256"
            stamp.write_text(digest)
            os.replace(stamp, _stamp(name, into))
    except (Exception, SystemExit) as exc:
        last = (log.getvalue().strip().splitlines() or [str(exc)])[-1]
        raise RuntimeError(f"cannot compile the engine ({last}); plain Python is used") from None
    finally:
        os.chdir(cwd)
        shutil.rmtree(temp, ignore_errors=True)
    return f"compiled engine: built {', '.join(stale)}"


def main():
    """scripts/compile-engine: build(), its report on one line; a failed build is
    reported, not an error (the plain modules serve)."""
    try:
        print(build())
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
