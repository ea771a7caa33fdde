"""The security claims of ``docs/security.rst``, each shown by a test here.

* The project's Python sources contain no unsafe deserialisation (pickle and
  friends, ``np.load`` with pickles, ``yaml.load``), no ``eval``/``exec``/
  ``compile``, no shell (``shell=True``, ``os.system``, ``os.popen``), and no
  Mako template built from anything but a literal.  A static scan with ``ast``
  checks every file, and a self-test shows the scan finds each of these.
* A model whose names are hostile (C keywords, quotes, backslashes, newlines,
  ``*/``, ``#include``, ``%s``, Mako's ``${…}`` and ``<% %>``, non-ASCII, ANSI
  escapes, very long names, names that collide once sanitised, rich markup)
  compiles, plain and tiled, to C that builds with ``-Wall -Wextra -Werror
  -pedantic`` and matches ONNX Runtime; no hostile text reaches the C outside
  comments, and the comments are provably inert.  ``report.json``, the memory
  plot and the terminal tables carry the names too, escaped for each medium.
* Data files cannot run code: ``.npz`` with pickled objects and YAML with
  Python tags are refused; external data cannot leave the model's folder,
  even through a symbolic link; ``CC`` is split, never given to a shell.
"""

from __future__ import annotations

import ast
import html.parser
import json
import math
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.cli import cli
from deeploy_core.errors import DeeployError
from deeploy_core.frontend import import_model
from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.memory.hierarchy import load_hierarchy
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_core.validate.data import load_npz_by_position

ROOT = Path(__file__).resolve().parent.parent
STRICT_FLAGS = ("-Wall", "-Wextra", "-Werror", "-pedantic")

# -- the static scan ---------------------------------------------------------------------------------------

DESERIALISERS = frozenset({"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle", "joblib"})
"""Modules that turn bytes into live objects (and so can run code while loading)."""
DYNAMIC_CODE = frozenset({"eval", "exec", "compile", "builtins.eval", "builtins.exec", "builtins.compile"})
SHELLS = frozenset({"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
                    "asyncio.create_subprocess_shell", "pty.spawn"})
PROCESS_CALLS = frozenset({"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
                           "subprocess.Popen", "asyncio.create_subprocess_exec"})
UNSAFE_YAML = frozenset({"yaml.unsafe_load", "yaml.unsafe_load_all", "yaml.full_load", "yaml.full_load_all",
                         "yaml.Loader", "yaml.UnsafeLoader", "yaml.FullLoader", "yaml.CLoader", "yaml.CUnsafeLoader",
                         "yaml.CFullLoader"})
YAML_LOADS = frozenset({"yaml.load", "yaml.load_all"})
SAFE_YAML_LOADERS = frozenset({"yaml.SafeLoader", "yaml.CSafeLoader", "yaml.BaseLoader", "yaml.CBaseLoader"})
PICKLE_LOADERS = frozenset({"torch.load", "pandas.read_pickle", "numpy.lib.format.read_array"})
MAKO_TEMPLATES = frozenset({"mako.template.Template", "mako.lookup.TemplateLookup"})
MAKO_HOME = ROOT / "deeploy_core" / "mapping" / "template.py"
"""The one place allowed to build a Mako template: :class:`NodeTemplate`, from its (literal) source."""


def project_sources() -> list[Path]:
    """Every Python file of the core, the plugins' packages (tests excluded) and the benchmarks."""
    sources = [*sorted((ROOT / "deeploy_core").rglob("*.py")), *sorted((ROOT / "bench").rglob("*.py"))]
    for plugin in sorted(path for path in (ROOT / "plugins").iterdir() if path.is_dir()):
        for path in sorted(plugin.rglob("*.py")):
            first = path.relative_to(plugin).parts[0]
            if first not in ("tests", "build") and not first.endswith(".egg-info"):
                sources.append(path)
    return [path for path in sources if "__pycache__" not in path.parts]


class _Scan(ast.NodeVisitor):
    """Collects findings in one module, resolving import aliases (``np.load`` is ``numpy.load``)."""

    def __init__(self, label: str, allow_mako: bool) -> None:
        self.label = label
        self.allow_mako = allow_mako
        self.aliases: dict[str, str] = {}
        self.findings: list[str] = []

    def report(self, node: ast.AST, what: str) -> None:
        self.findings.append(f"{self.label}:{getattr(node, 'lineno', 0)}: {what}")

    def qualified(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            return f"{self.qualified(node.value)}.{node.attr}"
        return ""

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] in DESERIALISERS:
                self.report(node, f"imports {alias.name}")
            self.aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if module.split(".")[0] in DESERIALISERS:
            self.report(node, f"imports from {module}")
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}" if module else alias.name

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self.qualified(node) in UNSAFE_YAML:
            self.report(node, f"uses {self.qualified(node)}")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if self.qualified(node) in UNSAFE_YAML:
            self.report(node, f"uses {self.qualified(node)}")

    def visit_Call(self, node: ast.Call) -> None:
        name = self.qualified(node.func)
        keywords = {keyword.arg: keyword.value for keyword in node.keywords if keyword.arg}
        if name in DYNAMIC_CODE:
            self.report(node, f"calls {name}()")
        if name in SHELLS:
            self.report(node, f"calls {name}() (runs a shell)")
        if name in PROCESS_CALLS and "shell" in keywords and not _is_constant(keywords["shell"], False):
            self.report(node, f"calls {name}() with shell=…")
        if name in YAML_LOADS:
            loader = keywords.get("Loader", node.args[1] if len(node.args) > 1 else None)
            if loader is None or self.qualified(loader) not in SAFE_YAML_LOADERS:
                self.report(node, f"calls {name}() without a safe loader")
        if name == "numpy.load" and not _is_constant(keywords.get("allow_pickle"), False):
            self.report(node, "calls numpy.load() without allow_pickle=False")
        if name in PICKLE_LOADERS:
            self.report(node, f"calls {name}() (unpickles)")
        if name in MAKO_TEMPLATES and not self.allow_mako:
            self.report(node, f"builds a Mako template ({name}) outside NodeTemplate")
        if name.endswith("NodeTemplate"):
            source = node.args[0] if node.args else keywords.get("code")
            if not (isinstance(source, ast.Constant) and isinstance(source.value, str)):
                self.report(node, "NodeTemplate source is not a string literal")
            elif "node_name" in source.value:
                self.report(node, "NodeTemplate renders node_name, the model's raw node name")
        self.generic_visit(node)


def _is_constant(node: ast.expr | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


def scan(source: str, label: str, allow_mako: bool = False) -> list[str]:
    """The findings of the security scan in one module's source."""
    visitor = _Scan(label, allow_mako)
    visitor.visit(ast.parse(source, filename=label))
    return visitor.findings


def test_the_scan_covers_the_whole_project() -> None:
    sources = {path.relative_to(ROOT).as_posix() for path in project_sources()}
    for expected in ("deeploy_core/validate/build.py", "deeploy_core/validate/data.py", "deeploy_core/ir/names.py",
                     "deeploy_core/memory/hierarchy.py", "deeploy_core/mapping/template.py", "bench/alloc.py",
                     "plugins/generic_c/deeploy_generic_c/ops/matmul/float32.py"):
        assert expected in sources
    assert not any("/tests/" in f"/{path}" for path in sources)


def test_project_sources_pass_the_security_scan() -> None:
    findings = []
    for path in project_sources():
        label = path.relative_to(ROOT).as_posix()
        findings += scan(path.read_text(encoding="utf-8"), label, allow_mako=path == MAKO_HOME)
    assert findings == []


UNSAFE_MODULE = '''
import pickle
import numpy as np
import yaml
from subprocess import run
import subprocess as sp
from marshal import loads
from mako.template import Template
from deeploy_core.mapping import NodeTemplate

eval("1")
exec("x = 1")
compile("1", "f", "eval")
np.load("a.npy")
np.load("a.npy", allow_pickle=True)
yaml.load(text)
yaml.load(text, Loader=yaml.Loader)
yaml.unsafe_load(text)
run("cc x.c", shell=True)
sp.check_output(["cc"], shell=flag)
import os
os.system("cc x.c")
os.popen("cc")
Template(text)
NodeTemplate(f"${{x}} {name}")
NodeTemplate("${node_name}")
'''

SAFE_MODULE = '''
import re
import numpy as np
import yaml
import subprocess
from deeploy_core.mapping import NodeTemplate

re.compile("x")
np.load("a.npz", allow_pickle=False)
yaml.safe_load(text)
yaml.load(text, Loader=yaml.SafeLoader)
subprocess.run(["cc", "x.c"], check=True)
subprocess.run(["cc", "x.c"], shell=False)
NodeTemplate("f(${x}, ${y});", headers=("math.h",))
'''


def test_the_scan_finds_every_kind_of_unsafe_call() -> None:
    found = "\n".join(scan(UNSAFE_MODULE, "unsafe.py"))
    for what in ("imports pickle", "imports from marshal", "calls eval()", "calls exec()", "calls compile()",
                 "calls numpy.load() without allow_pickle=False", "calls yaml.load() without a safe loader",
                 "uses yaml.Loader", "uses yaml.unsafe_load", "calls subprocess.run() with shell=",
                 "calls subprocess.check_output() with shell=", "calls os.system()", "calls os.popen()",
                 "builds a Mako template (mako.template.Template)", "NodeTemplate source is not a string literal",
                 "NodeTemplate renders node_name"):
        assert what in found, what
    assert found.count("numpy.load") == 2 and found.count("yaml.load()") == 2
    assert scan(SAFE_MODULE, "safe.py") == []


# -- a model whose every name is hostile --------------------------------------------------------------------

LONG = "x" * 3000


@dataclass(frozen=True)
class HostileModel:
    path: Path
    tensor_names: tuple[str, ...]
    node_names: tuple[str, ...]


TENSORS = {
    "input": "int",
    "weight": "*/ #include <stdlib.h> /*",
    "matmul": 'q"uote\\back\nslash\r\t',
    "bias": '${"MAKO" + "EVALUATED"} ${x}',
    "add": "<% __M = 'MAKO' + 'RAN' %>${__M}%s%n%x",
    "relu": "ünïcödé \u202e\x1b[31m bidi ??/ ??= *\\ int dc_injected = 1; /\\",
    "scale": "a-b",
    "mul": "a_b",
    "shift": "a b",
    "sub": "A_B",
    "long1": LONG + "1",
    "long2": LONG + "2",
    "output": "main",
}
"""Tensor names by role.  ``*\\`` followed by ``/\\`` once turned into ``*/ … //`` inside a comment."""
NODES = ("*/ evil(); /*", "${node}", "<%node%>\x1b[2J\u202e", "int", "", "\\\n#define x 1", '"' + "y" * 2000,
         "[/x] [link=https://example.com]click[/link]")
MODEL_FILE = 'net *\\ #include <stdlib.h> ${evil} %s "q" [red] ü.onnx'
"""The network is named after the file (so the name reaches C comments); ``/`` cannot be part of it."""
INJECTED = ("#include <stdlib.h>", "int dc_injected = 1", "evil()", "#define x", "${", "<%", "%>", "%s", "%n", '"',
            "\\", "??", "ü", "\x1b", "[/x]", LONG[:100])
"""Fragments of the hostile names that must never reach C code outside comments.  (Their letters may: a
mangled identifier such as ``dc_w_include_stdlib_h`` keeps the name's alphanumeric runs.)"""


def hostile_model(directory: Path) -> HostileModel:
    rng = np.random.default_rng(7)
    t = TENSORS

    def const(name: str, shape: list[int]) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    ops = [("MatMul", [t["input"], t["weight"]], t["matmul"]), ("Add", [t["matmul"], t["bias"]], t["add"]),
           ("Relu", [t["add"]], t["relu"]), ("Mul", [t["relu"], t["scale"]], t["mul"]),
           ("Sub", [t["mul"], t["shift"]], t["sub"]), ("Relu", [t["sub"]], t["long1"]),
           ("Neg", [t["long1"]], t["long2"]), ("Abs", [t["long2"]], t["output"])]
    nodes = [helper.make_node(op, inputs, [output], name=name) for (op, inputs, output), name in zip(ops, NODES)]
    graph = helper.make_graph(
        nodes, "graph */ ${g} <% %>", [helper.make_tensor_value_info(t["input"], TensorProto.FLOAT, [16, 8])],
        [helper.make_tensor_value_info(t["output"], TensorProto.FLOAT, [16, 8])],
        [const(t["weight"], [8, 8]), const(t["bias"], [8]), const(t["scale"], [8]), const(t["shift"], [8])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    path = directory / MODEL_FILE
    onnx.save(model, path)
    return HostileModel(path, tuple(TENSORS.values()), NODES)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> HostileModel:
    return hostile_model(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def generic_c_host() -> PluginHost:
    """A host with the generic C platform; the CLI tests ask for it too, to skip where it is not installed."""
    generic_c_plugin = pytest.importorskip("deeploy_generic_c.plugin", reason="the generic C plugin is not installed")
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    return host


_COMMENT = re.compile(r"/\*(.*?)\*/")


def check_generated_c(files: dict[str, str]) -> None:
    """No hostile text in C code; every comment is one line of inert printable ASCII."""
    for name, text in files.items():
        assert text.isascii(), f"{name} holds non-ASCII text"
        for number, line in enumerate(text.splitlines(), 1):
            where = f"{name}:{number}: {line[:120]}"
            for body in _COMMENT.findall(line):
                assert "/*" not in body and not body.endswith("*"), where
                assert "\\" not in body and "??" not in body, where
                assert all(32 <= ord(char) < 127 for char in body), where
            code = _COMMENT.sub(" ", line)
            assert "/*" not in code and "*/" not in code and "//" not in code, f"comment not closed on its line: {where}"
            if code.lstrip().startswith("#include"):
                assert re.fullmatch(r'\s*#include [<"][\w./]+[>"]\s*', code), where
                continue
            if code.strip() == 'extern "C" {':  # the headers' C++ linkage guard (codegen/c_linkage.py), fixed text
                continue
            for fragment in INJECTED:
                assert fragment not in code, f"{fragment!r} reached C code: {where}"
        # The names hold Python for Mako ("MAKO" + "EVALUATED"); only evaluating it would join the words.
        assert "MAKOEVALUATED" not in text and "MAKORAN" not in text, "Mako evaluated text from the model"


@pytest.mark.parametrize("level_sizes", [{}, {"L1": 2000}], ids=["arena", "tiled"])
def test_hostile_names_build_warning_free_and_match_onnx_runtime(
    hostile: HostileModel, generic_c_host: PluginHost, level_sizes: dict[str, int], tmp_path: Path
) -> None:
    generated, result = validate_model(
        hostile.path, CompileOptions(platform="generic-c", level_sizes=level_sizes), generic_c_host,
        toolchain=Toolchain.from_environment(extra_flags=STRICT_FLAGS), build_dir=tmp_path, repeats=1,
    )
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
    if level_sizes:
        assert "tiles" in generated.files["Network.c"], "the tiled code path (and its comments) was exercised"
    check_generated_c(generated.files)
    # a float weight's name is also the stem of its storage (NAME__bits, NAME__store: "__" is never mangled in)
    c_names = {name.split("__")[0] for name in re.findall(r"\bdc_(?:in|out|act|w|layer)_\w+",
                                                           "".join(generated.files.values()))}
    assert all(len(name) < 80 for name in c_names), "long names are shortened"
    assert len({n for n in c_names if n.startswith(("dc_act_a_b", "dc_w_a_b"))}) == 4, "colliding names stay apart"


def test_the_comment_checker_would_catch_the_old_escape() -> None:
    """``*\\`` used to become ``*/`` after the ``*/`` check: the comment closed and code followed."""
    escaped = "/* *" + "/ int dc_injected = 1; /" + "/: activation */"
    with pytest.raises(AssertionError):
        check_generated_c({"Network.c": escaped})


def test_report_json_keeps_every_name_exactly(hostile: HostileModel, generic_c_host: PluginHost, tmp_path: Path) -> None:
    _, generated = compile_model(hostile.path, CompileOptions(platform="generic-c"), generic_c_host)
    written = {path.name: path for path in generated.write(tmp_path)}
    report = json.loads(written["report.json"].read_text(encoding="utf-8"))
    assert report["network"] == Path(MODEL_FILE).stem
    nodes = [row["node"] for row in report["layers"]]
    assert "[/x] [link=https://example.com]click[/link]" in nodes and NODES[2] in nodes
    buffers = {entry["name"] for entry in report["memory"]["buffers"]}
    assert {TENSORS["add"], TENSORS["relu"], TENSORS["long1"], TENSORS["long2"]} <= buffers


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)


def test_memory_plot_escapes_every_name(hostile: HostileModel, generic_c_host: PluginHost, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPLOY_CORE_PLUGINS", "generic-c")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["compile", str(hostile.path), "--platform", "generic-c", "-o", str(out), "--plot"])
    assert result.exit_code == 0, result.output
    page = (out / "memory.html").read_text(encoding="utf-8")
    parser = _Tags()
    parser.feed(page)
    assert parser.tags <= {"table", "thead", "tbody", "tr", "th", "td", "span",
                           "html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "section", "svg", "rect",
                           "g", "line", "text"}, "a name opened an element"
    assert "<%" not in page and "<script" not in page and "&lt;%" in page
    [svg] = out.glob("memory_*.svg")
    buffers = {element.get("data-buffer") for element in ElementTree.parse(svg).iter() if element.get("data-buffer")}
    assert {TENSORS["add"], TENSORS["long1"], TENSORS["output"]} <= buffers, "names survive XML escaping exactly"
    check_generated_c({path.name: path.read_text(encoding="utf-8") for path in out.glob("Network*")})


def test_terminal_tables_show_names_literally(hostile: HostileModel, generic_c_host: PluginHost,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """rich markup in a name would crash the table (``[/x]``); an ESC would reach the terminal."""
    monkeypatch.setenv("DEEPLOY_CORE_PLUGINS", "generic-c")
    result = CliRunner().invoke(cli, ["analyze", str(hostile.path), "--platform", "generic-c"],
                                env={"COLUMNS": "400"})
    assert result.exit_code == 0, (result.output, result.exception)
    assert "[/x] [link=https://example.com]click[/link]" in result.stdout
    assert "\x1b" not in result.stdout and "\\x1b" in result.stdout and "\\u202e" in result.stdout


def test_a_failed_compile_leaves_the_output_folder_as_it_was(hostile: HostileModel, generic_c_host: PluginHost,
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPLOY_CORE_PLUGINS", "generic-c")
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("the user's file\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["compile", str(hostile.path), "--platform", "generic-c", "-o", str(out),
                                      "--force", "--l1", "16"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert [path.name for path in tmp_path.iterdir()] == ["out"], "the staging folder is removed"
    assert [path.name for path in out.iterdir()] == ["keep.txt"]


# -- data files and the compiler command ----------------------------------------------------------------------


def test_npz_holding_pickled_objects_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "inputs.npz"
    np.savez(path, x=np.array([{"payload": "would run on unpickling"}], dtype=object))
    with pytest.raises(DeeployError, match="cannot read arrays") as caught:
        load_npz_by_position(path)
    assert "pickle" in str(caught.value).lower()


def test_yaml_with_python_tags_cannot_run_code(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "hierarchy.yaml"
    path.write_text(f"levels: !!python/object/apply:os.system ['touch {marker}']\ndefault: L2\ncompute: L1\n",
                    encoding="utf-8")
    with pytest.raises(DeeployError, match="cannot read it"):
        load_hierarchy(path)
    assert not marker.exists()


def test_external_data_cannot_leave_the_folder_through_a_symlink(tmp_path: Path) -> None:
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.ones(2, np.float32).tobytes())
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "weights.bin").symlink_to(secret)
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    weight = numpy_helper.from_array(np.zeros(2, np.float32), "w")
    weight.data_location = TensorProto.EXTERNAL
    weight.ClearField("raw_data")
    entry = weight.external_data.add()
    entry.key, entry.value = "location", "weights.bin"
    graph.initializer.append(weight)
    path = folder / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    with pytest.raises(ModelImportError, match="outside the model's folder"):
        import_model(path)


def test_cc_is_split_into_arguments_never_given_to_a_shell(
    hostile: HostileModel, generic_c_host: PluginHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    monkeypatch.setenv("CC", f"cc; touch {marker}")
    with pytest.raises(DeeployError, match="C compiler 'cc;' not found"):
        Toolchain.from_environment()
    monkeypatch.setenv("CC", f"cc -DUNUSED='$(touch {marker})'")
    toolchain = Toolchain.from_environment()
    assert toolchain.compiler == ("cc", f"-DUNUSED=$(touch {marker})")
    _, generated = compile_model(hostile.path, CompileOptions(platform="generic-c"), generic_c_host)
    executable = build_executable(generated, tmp_path / "build", toolchain)
    inputs = {TENSORS["input"]: np.ones((16, 8), np.float32)}
    outputs, _ = run_network(executable, generated, inputs, 1)
    assert all(math.isfinite(value) for value in np.asarray(outputs[0]).ravel())
    assert not marker.exists(), "the command substitution was run by a shell"
