"""Build hook only (metadata lives in pyproject.toml): compile proto/ into cirulla.v1,
and the native rules core rules/_native.c into cirulla.rules._native.

The generated modules are never committed or edited by hand; every install, editable or
not, produces them from the .proto files with grpcio-tools' bundled protoc. The native
core is optional: without a C compiler the build skips it and the pure-Python core runs
(``cirulla --version`` says which).
"""

from __future__ import annotations

from pathlib import Path

from setuptools import Extension, setup

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
    (out_pkg / "__init__.py").write_text('"""Generated from proto/cirulla/v1 at install time."""\n')


# Generated before setuptools validates package directories: `cirulla.v1` must exist
# by then, for wheels and editable installs alike.
generate_protos()
setup(
    ext_modules=[
        Extension(
            "cirulla.rules._native",
            ["rules/_native.c"],
            extra_compile_args=["-O2", "-std=gnu11"],
            optional=True,  # no compiler: the install still works, on the Python core
        )
    ]
)
