"""Build hook only (metadata lives in pyproject.toml): compile proto/ into cirulla.v1,
and the three extensions on the native rules core's state machine (rules/cirulla/rules/
engine.h): cirulla.rules._native, cirulla.bots._search and cirulla.env._native; and the
match server's decision writer, cirulla.server.convert._framing, and its records' JSON
writer, cirulla.server.convert._recordjson; and the bot kit's decision reader,
cirulla.bots._decode.

The generated modules are never committed or edited by hand; every install, editable or
not, produces them from the .proto files with grpcio-tools' bundled protoc. The native
core is optional: without a C compiler the build skips it and the pure-Python core runs
(``cirulla --version`` says which).
"""

from __future__ import annotations

import os
import re
import shutil
import tomllib
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
PROTO_ROOT = ROOT / "proto"
OUT_ROOT = ROOT / "src"


def generate_protos() -> None:
    import grpc_tools
    from grpc_tools import protoc

    protos = sorted(str(p.relative_to(PROTO_ROOT)) for p in PROTO_ROOT.rglob("*.proto"))
    out_pkg = OUT_ROOT / "cirulla" / "v1"
    out_pkg.mkdir(parents=True, exist_ok=True)
    include = Path(grpc_tools.__file__).parent / "_proto"
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={OUT_ROOT}",
        f"--pyi_out={OUT_ROOT}",
        f"--grpc_python_out={OUT_ROOT}",
        *protos,
    ]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed: {' '.join(args)}")
    # The sources ship inside the package: clients in other languages compile them.
    shipped = out_pkg / "proto"
    shutil.rmtree(shipped, ignore_errors=True)
    for proto in protos:
        target = shipped / proto
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PROTO_ROOT / proto, target)
    (out_pkg / "__init__.py").write_text(
        '"""Generated from proto/cirulla/v1 at install time."""\n\n'
        "from pathlib import Path\n\n"
        "#: Include root of the .proto files this package was generated from\n"
        "#: (``protoc -I PROTO_ROOT cirulla/v1/match_service.proto ...``).\n"
        'PROTO_ROOT = Path(__file__).parent / "proto"\n'
    )
    check_floors(out_pkg)


def generated_versions(out_pkg: Path) -> dict[str, tuple[int, ...]]:
    """The protobuf and grpcio versions the generated code demands at run time."""
    versions: dict[str, tuple[int, ...]] = {}
    for path in sorted(out_pkg.glob("*_pb2.py")):
        found = re.search(r"^# Protobuf Python Version: ([0-9.]+)", path.read_text(), re.M)
        if found:
            versions["protobuf"] = max(versions.get("protobuf", ()), _version(found[1]))
    for path in sorted(out_pkg.glob("*_pb2_grpc.py")):
        found = re.search(r"^GRPC_GENERATED_VERSION = '([0-9.]+)'", path.read_text(), re.M)
        if found:
            versions["grpcio"] = max(versions.get("grpcio", ()), _version(found[1]))
    return versions


def declared_floors() -> dict[str, tuple[int, ...]]:
    """``name>=X`` floors of pyproject.toml's runtime dependencies."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    floors = {}
    for requirement in project["dependencies"]:
        found = re.match(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*>=\s*([0-9.]+)", requirement)
        if found:
            floors[found[1].lower()] = _version(found[2])
    return floors


def check_floors(out_pkg: Path) -> None:
    """Refuse a build whose generated code needs newer runtimes than pyproject admits:
    an install at the floors would crash at import (the floors derive from the build)."""
    floors = declared_floors()
    for name, needed in generated_versions(out_pkg).items():
        floor = floors.get(name)
        if floor is None or floor < needed:
            shown = ".".join(map(str, needed))
            raise RuntimeError(
                f"the generated code needs {name}>={shown}, but pyproject.toml admits "
                f"{name}>={'.'.join(map(str, floor or ()))}: the floors in [project] dependencies "
                "derive from the grpcio-tools pinned exactly in [build-system] requires "
                "(docs/install.md)"
            )


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


class BuildExt(build_ext):
    """An optional extension that fails to compile leaves no stale build behind.

    setuptools skips an optional extension whose compilation fails, with a warning, and an
    editable install builds in place: the module built from the previous sources would stay
    and run, silently, with code the sources no longer hold. It is removed instead, so the
    Python core runs (``cirulla --version`` says so) and ``CIRULLA_CORE=native`` fails.
    """

    def finalize_options(self) -> None:
        """The extensions compiled side by side, one per processor (unless ``--parallel``
        says otherwise): an install waited on one compiler at a time, the rules core's
        alone about half of it."""
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception:
            if ext.optional and getattr(self, "editable_mode", False):
                build_py = self.get_finalized_command("build_py")
                package = ext.name.rpartition(".")[0]
                filename = Path(self.get_ext_filename(ext.name)).name
                stale = Path(build_py.get_package_dir(package)) / filename
                if stale.exists():
                    stale.unlink()
                    print(f"warning: {ext.name} did not build: removed the stale {stale}")
            raise


# Generated before setuptools validates package directories: `cirulla.v1` must exist
# by then, for wheels and editable installs alike.
generate_protos()
setup(
    cmdclass={"build_ext": BuildExt},
    ext_modules=[
        Extension(
            "cirulla.rules._native",
            ["rules/cirulla/rules/_native.c"],
            depends=[
                "rules/cirulla/rules/engine.h",
                "rules/cirulla/rules/eventlist.h",
                "rules/cirulla/rules/gamestate.h",
            ],
            extra_compile_args=["-O2", "-std=gnu11", "-Wno-unused-function"],
            optional=True,  # no compiler: the install still works, on the Python core
        ),
        Extension(
            # the bots' inference, playouts and ISMCTS loop, on the rules core's state machine
            "cirulla.bots._search",
            ["bots/cirulla/bots/_search.c"],
            depends=["rules/cirulla/rules/engine.h"],
            extra_compile_args=["-O2", "-std=gnu11", "-Wno-unused-function"],
            optional=True,  # no compiler: the bots search in Python
        ),
        Extension(
            # the environments' stepping and encoding, on the rules core's state machine
            "cirulla.env._native",
            ["env/cirulla/env/_native_env.c"],
            depends=["rules/cirulla/rules/engine.h"],
            extra_compile_args=["-O2", "-std=gnu11", "-Wno-unused-function"],
            optional=True,  # no compiler: cirulla.env runs on the Python reference
        ),
        Extension(
            # the match server's decision requests written from the game's state
            "cirulla.server.convert._framing",
            ["server/cirulla/server/convert/_framing.c"],
            depends=["server/cirulla/server/convert/outbuf.h"],
            extra_compile_args=["-O2", "-std=gnu11"],
            optional=True,  # no compiler: the server frames decisions in Python
        ),
        Extension(
            # a finished game's record entries written as JSON without building dicts
            "cirulla.server.convert._recordjson",
            ["server/cirulla/server/convert/_recordjson.c"],
            depends=["server/cirulla/server/convert/outbuf.h"],
            extra_compile_args=["-O2", "-std=gnu11"],
            optional=True,  # no compiler: the server writes records in Python
        ),
        Extension(
            # the bot kit's decision requests read from their bytes in one call
            "cirulla.bots._decode",
            ["bots/cirulla/bots/_decode.c"],
            extra_compile_args=["-O2", "-std=gnu11"],
            optional=True,  # no compiler: the kit reads decisions in Python
        ),
    ],
)
