"""A PEP 517 build backend for the askslack package, standard library only.

``pip install ./clients/python`` then needs nothing from a package index —
not even setuptools or wheel — which matters where no index is reachable.
It builds one pure-Python wheel (``py3-none-any``) of the ``askslack``
directory, an editable wheel (a ``.pth`` pointing here) and an sdist. The
metadata comes from ``pyproject.toml``'s ``[project]`` table.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
PACKAGE = "askslack"
TAG = "py3-none-any"

__all__ = [
    "get_requires_for_build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_editable",
    "build_wheel",
    "build_editable",
    "build_sdist",
]


def _project() -> Dict[str, str]:
    """The string fields of pyproject.toml's [project] table (read without tomllib, which 3.10 lacks)."""
    text = (HERE / "pyproject.toml").read_text(encoding="utf-8")
    m = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not m:
        raise RuntimeError("pyproject.toml has no [project] table")
    return dict(re.findall(r'^([A-Za-z][\w-]*)\s*=\s*"([^"\n]*)"\s*$', m.group(1), re.M))


def _metadata() -> Tuple[str, str, str]:
    p = _project()
    name, version = p["name"], p["version"]
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {p.get('description', '')}",
        f"Requires-Python: {p.get('requires-python', '>=3.10')}",
        "Classifier: Programming Language :: Python :: 3",
        "Classifier: Typing :: Typed",
    ]
    readme = HERE / p.get("readme", "README.md")
    body = ""
    if readme.is_file():
        lines.append("Description-Content-Type: text/markdown")
        body = "\n" + readme.read_text(encoding="utf-8")
    return name, version, "\n".join(lines) + "\n" + body


def _package_files() -> List[Path]:
    out = []
    for p in sorted((HERE / PACKAGE).rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts and (p.suffix == ".py" or p.name == "py.typed"):
            out.append(p)
    return out


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _wheel(wheel_directory: str, extra: List[Tuple[str, bytes]], with_package: bool) -> str:
    name, version, metadata = _metadata()
    dist_info = f"{name}-{version}.dist-info"
    files: List[Tuple[str, bytes]] = []
    if with_package:
        files += [(p.relative_to(HERE).as_posix(), p.read_bytes()) for p in _package_files()]
    files += extra
    files += [
        (f"{dist_info}/METADATA", metadata.encode("utf-8")),
        (f"{dist_info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: _askslack_build\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode()),
    ]
    record = "".join(f"{path},{_digest(data)},{len(data)}\n" for path, data in files) + f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode()))
    filename = f"{name}-{version}-{TAG}.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return filename


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    return _wheel(wheel_directory, [], with_package=True)


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None) -> str:
    name, version, _ = _metadata()
    pth = (f"__editable__.{name}-{version}.pth", (str(HERE) + "\n").encode())
    return _wheel(wheel_directory, [pth], with_package=False)


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    name, version, metadata = _metadata()
    base = f"{name}-{version}"
    members = [(p, p.relative_to(HERE).as_posix()) for p in _package_files()]
    for extra in ("pyproject.toml", "README.md", "_askslack_build.py"):
        if (HERE / extra).is_file():
            members.append((HERE / extra, extra))
    filename = f"{base}.tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    now = int(time.time())
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tar:
        pkg_info = metadata.encode("utf-8")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size, info.mtime, info.mode = len(pkg_info), now, 0o644
        tar.addfile(info, io.BytesIO(pkg_info))
        for path, rel in members:
            data = path.read_bytes()
            info = tarfile.TarInfo(f"{base}/{rel}")
            info.size, info.mtime, info.mode = len(data), now, 0o644
            tar.addfile(info, io.BytesIO(data))
    return filename
