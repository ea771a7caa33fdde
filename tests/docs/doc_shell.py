"""Running the documented commands for real, without a shell.

Each program a page may name has one translation, chosen so that the command
does what the page says without touching the machine outside a temporary
folder:

``deeploy-core``, ``python``, ``pytest`` (also as ``.venv/bin/…``)
   run from the session's environment: this test run's own virtualenv, or the
   throw-away one a session created (:class:`Environment`).
``python -m venv .venv``
   creates that throw-away environment: a venv that sees this environment's
   third-party packages but no deeploy distribution
   (:func:`deeploy_core.testing.isolated_install.isolated_venv`), so installs
   need no network.
``pip install [-e] PATH[extras]``
   in a throw-away environment: installs for real, offline (``--no-deps``:
   the dependencies are already visible), from a copy when the path is in this
   checkout so that no build artefact lands in it.  In this run's own
   environment nothing is installed; the line is checked instead: the path is
   a project, its extras exist, and it is the project this environment has
   installed under that name.
``python bench/X.py …``
   the benchmarks run for minutes over Deeploy's peer networks; the line is
   checked against the script's ``--help``: every option it uses exists.
``make TARGET``
   ``make -n``: the target exists and its recipe expands (running ``make
   test`` from the test suite would run the suite inside itself).
``make -C FOLDER …`` (a folder the page wrote, e.g. a compile's output)
   run for real in that folder: the generated Makefile builds the library,
   the self-test or a program.  When a ``CC=…`` argument names a compiler
   that is not installed (a cross compiler), ``make -n`` instead: the recipe
   expands and nothing is built.
``cmake``
   run for real; without cmake installed, only checked: ``-S FOLDER`` holds a
   ``CMakeLists.txt``.
``cc``/``gcc`` and ``./PROGRAM``
   run, with glob patterns expanded in the working folder as a shell would.
``cat FILE``
   prints the file (pages show generated files this way).
"""

from __future__ import annotations

import glob
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from deeploy_core.testing.isolated_install import isolated_venv
from tests.docs.doc_blocks import REPO
from tests.docs.doc_commands import DocCommand

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, packaged (a dependency of the test extra there)
    import tomli as tomllib

TIMEOUT_SECONDS = 900

_CHECKOUT_LEFT_BEHIND = frozenset({".git", ".venv", "build", "docs", "tests", "bench", "examples", "plugins"})
_BUILD_PRODUCTS = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache", "*.so", "build")


@dataclass(frozen=True)
class Environment:
    """Where programs come from: a Python interpreter and the folder of its console scripts."""

    python: Path
    own: bool
    """True for a throw-away venv a session made (``pip install`` installs into it)."""

    @property
    def scripts(self) -> Path:
        return self.python.parent

    @classmethod
    def of_this_run(cls) -> Environment:
        return cls(Path(sys.executable), own=False)

    @classmethod
    def throw_away(cls, root: Path, projects: list[Path]) -> Environment:
        """A new venv under ``root`` holding ``projects`` (folders of this checkout) and no other deeploy code."""
        return cls(isolated_venv(root, projects), own=True)


def _program_name(word: str) -> str:
    return word.removeprefix(".venv/bin/")


def _completed(argv: list[str], stdout: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(argv, 0, stdout, "")


class DocShell:
    """Runs documented commands in ``folder``; ``scratch`` holds environments and project copies."""

    def __init__(self, folder: Path, scratch: Path, environment: Environment | None = None) -> None:
        self.folder = folder
        self.scratch = scratch
        scratch.mkdir(parents=True, exist_ok=True)
        self.environment = environment or Environment.of_this_run()
        self._handlers: dict[str, Callable[[DocCommand], subprocess.CompletedProcess[str]]] = {
            "deeploy-core": self._deeploy_core,
            "python": self._python,
            "python3": self._python,
            "pip": self._pip,
            "pytest": self._pytest,
            "make": self._make,
            "cmake": self._cmake,
            "cc": self._compiler,
            "gcc": self._compiler,
            "cat": self._cat,
        }

    @staticmethod
    def knows(command: DocCommand) -> bool:
        """Whether a command names a program this shell can run (checked before anything runs)."""
        name = _program_name(command.argv[0])
        return name.startswith("./") or name in {"deeploy-core", "python", "python3", "pip", "pytest", "make",
                                                 "cmake", "cc", "gcc", "cat"}

    def run(self, command: DocCommand) -> subprocess.CompletedProcess[str]:
        name = _program_name(command.argv[0])
        if name.startswith("./"):
            return self._exec([str(self.folder / name)], command)
        if name not in self._handlers:
            raise AssertionError(f"{command.where}: the docs tests cannot run {command.argv[0]!r} ({command.text})")
        return self._handlers[name](command)

    # -- programs ----------------------------------------------------------------------------------------------

    def _exec(self, argv: list[str], command: DocCommand) -> subprocess.CompletedProcess[str]:
        env = {key: value for key, value in os.environ.items() if key != "DEEPLOY_CORE_PLUGINS"}
        env.update({"COLUMNS": "80", **command.env})  # what a reader's terminal (and a CI log) has
        return subprocess.run(argv, cwd=self.folder, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_SECONDS)

    def _deeploy_core(self, command: DocCommand) -> subprocess.CompletedProcess[str]:
        return self._exec([str(self.environment.scripts / "deeploy-core"), *command.argv[1:]], command)

    def _pytest(self, command: DocCommand) -> subprocess.CompletedProcess[str]:
        argv = [str(self.environment.python), "-m", "pytest", "-p", "no:cacheprovider", *command.argv[1:]]
        return self._exec(argv, command)

    def _python(self, command: DocCommand) -> subprocess.CompletedProcess[str]:
        args = list(command.argv[1:])
        if args[:2] == ["-m", "venv"]:
            if args[2:] != [".venv"]:
                raise AssertionError(f"{command.where}: the docs create their environment as .venv, not {args[2:]}")
            self.environment = Environment.throw_away(self.scratch / "environment", [])
            return _completed(list(command.argv))
        if args and args[0].startswith("bench/"):
            return self._bench_options(command, args[0], args[1:])
        return self._exec([str(self.environment.python), *args], command)

    def _bench_options(self, command: DocCommand, script: str, args: list[str]) -> subprocess.CompletedProcess[str]:
        usage = self._exec([str(self.environment.python), script, "--help"], command)
        if usage.returncode != 0:
            return usage
        options = sorted({arg.split("=", 1)[0] for arg in args if arg.startswith("--")})
        unknown = [option for option in options
                   if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", usage.stdout)]
        if unknown:
            raise AssertionError(f"{command.where}: {script} has no option {unknown} ({command.text})")
        return usage

    def _make(self, command: DocCommand) -> subprocess.CompletedProcess[str]:
        args = list(command.argv[1:])
        folder = self._make_folder(command, args)
        if folder is None:
            return self._exec(["make", "-n", "-C", str(REPO), *args], command)
        compilers = [arg.split("=", 1)[1] for arg in args if arg.startswith("CC=")]
        installed = all(shutil.which(shlex.split(compiler)[0]) for compiler in compilers if compiler.strip())
        return self._exec(["make", *([] if installed else ["-n"]), *args], command)

    def _make_folder(self, command: DocCommand, args: list[str]) -> Path | None:
        """The folder of the working folder that ``make -C FOLDER`` names (None: the checkout's own Makefile)."""
        folders = [args[index + 1] for index, arg in enumerate(args[:-1]) if arg == "-C"]
        folders += [arg[2:] for arg in args if arg.startswith("-C") and len(arg) > 2]
        if not folders:
            return None
        if len(folders) > 1 or Path(folders[0]).is_absolute() or ".." in Path(folders[0]).parts:
            raise AssertionError(f"{command.where}: make -C takes one folder the page wrote ({command.text})")
        folder = self.folder / folders[0]
        if not (folder / "Makefile").is_file():
            raise AssertionError(f"{command.where}: {folders[0]!r} holds no Makefile ({command.text})")
        return folder

    def _cmake(self, command: DocCommand) -> subprocess.CompletedProcess[str]:
        if shutil.which("cmake") is not None:
            return self._exec(list(command.argv), command)
        args = list(command.argv[1:])
        sources = [args[index + 1] for index, arg in enumerate(args[:-1]) if arg == "-S"]
        for source in sources:
            if not (self.folder / source / "CMakeLists.txt").is_file():
                raise AssertionError(f"{command.where}: {source!r} holds no CMakeLists.txt ({command.text})")
        return _completed(list(command.argv))

    def _cat(self, command: DocCommand) -> subprocess.CompletedProcess[str]:
        texts = []
        for name in command.argv[1:]:
            path = self.folder / name
            if name.startswith("-") or not path.is_file():
                raise AssertionError(f"{command.where}: cat {name!r}: no such file in the working folder")
            texts.append(path.read_text(encoding="utf-8"))
        return _completed(list(command.argv), "".join(texts))

    def _compiler(self, command: DocCommand) -> subprocess.CompletedProcess[str]:
        argv = [command.argv[0]]
        for word in command.argv[1:]:
            if any(character in word for character in "*?["):
                matches = sorted(glob.glob(word, root_dir=self.folder))
                if not matches:
                    raise AssertionError(f"{command.where}: {word!r} matches no file in the working folder")
                argv.extend(matches)
            else:
                argv.append(word)
        return self._exec(argv, command)

    # -- pip -------------------------------------------------------------------------------------------------

    def _pip(self, command: DocCommand) -> subprocess.CompletedProcess[str]:
        args = list(command.argv[1:])
        if not args or args[0] != "install":
            raise AssertionError(f"{command.where}: only 'pip install' is documented ({command.text})")
        requirements: list[tuple[str, bool]] = []
        editable = False
        for word in args[1:]:
            if word in ("-e", "--editable"):
                editable = True
                continue
            if word.startswith("-"):
                raise AssertionError(f"{command.where}: pip option {word!r} is not run by the docs tests")
            requirements.append((word, editable))
            editable = False
        if not requirements:
            raise AssertionError(f"{command.where}: nothing to install ({command.text})")
        for requirement, editable in requirements:
            project, extras = self._project(command, requirement)
            if self.environment.own:
                self._install(command, project, editable)
            else:
                self._check_installed(command, project)
        return _completed(list(command.argv))

    def _project(self, command: DocCommand, requirement: str) -> tuple[Path, list[str]]:
        """The project folder a requirement names (the working folder first, then the checkout) and its extras."""
        match = re.fullmatch(r"(?P<path>[^\[\]]+)(?:\[(?P<extras>[^\]]*)\])?", requirement)
        if match is None or not (match["path"].startswith((".", "/")) or "/" in match["path"]
                                 or (self.folder / match["path"]).is_dir()):
            raise AssertionError(f"{command.where}: {requirement!r} is not a folder; the docs install from this "
                                 "checkout or a folder the page made")
        candidates = [self.folder / match["path"], REPO / match["path"]]
        project = next((path for path in candidates if (path / "pyproject.toml").is_file()), None)
        if project is None:
            raise AssertionError(f"{command.where}: {match['path']!r} holds no pyproject.toml")
        extras = [extra.strip() for extra in (match["extras"] or "").split(",") if extra.strip()]
        declared = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        missing = sorted(set(extras) - set(declared.get("optional-dependencies", {})))
        if missing:
            raise AssertionError(f"{command.where}: {project.name} has no extra {missing}")
        return project.resolve(), extras

    def _install(self, command: DocCommand, project: Path, editable: bool) -> None:
        source = project
        if project == REPO or REPO in project.parents:
            ignore_top = _CHECKOUT_LEFT_BEHIND if project == REPO else frozenset()

            def ignore(directory: str, names: list[str]) -> set[str]:
                skipped = set(_BUILD_PRODUCTS(directory, names))
                return skipped | (ignore_top & set(names) if Path(directory) == project else set())

            source = shutil.copytree(project, self.scratch / "sources" / project.name, ignore=ignore)
        argv = [sys.executable, "-m", "pip", "--python", str(self.environment.python), "install", "--quiet",
                "--no-deps", "--no-index", "--no-build-isolation", "--no-cache-dir",
                *(["-e"] if editable else []), str(source)]
        result = subprocess.run(argv, cwd=self.folder, capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
        assert result.returncode == 0, f"{command.where}: installing {project.name} failed:\n{result.stderr}"

    def _check_installed(self, command: DocCommand, project: Path) -> None:
        name = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
        try:
            distribution = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            raise AssertionError(f"{command.where}: {name} is not installed in the test environment") from None
        direct_url = distribution.read_text("direct_url.json")
        if direct_url:
            url = json.loads(direct_url).get("url", "")
            assert url.removeprefix("file://") == str(project), \
                f"{command.where}: {name} is installed from {url}, the docs install it from {project}"
