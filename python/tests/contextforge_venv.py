"""Where the ContextForge test runs ContextForge: a Python 3.12 virtual
environment under ``target/contextforge/venv`` (3.12 from pyenv, as on these
machines), made once and kept across runs, into which the README's install
block puts ContextForge 1.1.0 and the package's wheel under test, afresh each
run. Without Python 3.12 the test is skipped, saying so."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import unittest
from pathlib import Path
from typing import Dict

ROOT = Path(__file__).resolve().parents[2]
#: MCP_PROVENANCE_CONTEXTFORGE_VENV names another (a run that must not share this one).
VENV = Path(os.environ.get("MCP_PROVENANCE_CONTEXTFORGE_VENV") or ROOT / "target" / "contextforge" / "venv")
#: Where the wheel under test is: `make python-wheel` builds it into target/wheels before the
#: tests run; MCP_PROVENANCE_WHEELS names another folder (a wheel built apart, by hand).
WHEELS = Path(os.environ.get("MCP_PROVENANCE_WHEELS") or ROOT / "target" / "wheels")

#: How long an install may take: ContextForge and its hundred dependencies, the first time.
INSTALL_SECONDS = 900


def python312() -> Path:
    """pyenv's newest Python 3.12; skips the test, saying why, when there is none."""
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        raise unittest.SkipTest("ContextForge runs under Python 3.12, taken from pyenv, and pyenv is not installed")
    root = Path(subprocess.run([pyenv, "root"], capture_output=True, text=True, check=True).stdout.strip())
    found = [path for path in (root / "versions").glob("3.12.*/bin/python3.12") if path.is_file()]
    if not found:
        raise unittest.SkipTest(f"ContextForge runs under Python 3.12, and pyenv ({root}) has none")
    return max(found, key=lambda path: tuple(int(part) for part in re.findall(r"\d+", path.parents[1].name)))


def wheel() -> Path:
    """The one wheel of the package in ``WHEELS``."""
    found = sorted(WHEELS.glob("mcp_provenance-*.whl"))
    if len(found) != 1:
        raise AssertionError(f"{WHEELS} holds {len(found)} wheels of mcp-provenance, not one: `make python-wheel` builds it")
    return found[0]


def environment() -> Dict[str, str]:
    """The environment a command of the README runs in: the virtual environment's commands
    (``pip``, ``python``, ``mcpgateway``) first."""
    return {**os.environ, "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(VENV),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def installed(block: str) -> None:
    """Runs the README's install block in the virtual environment (made first if missing),
    ``mcp-provenance`` standing for the wheel under test until the package is on PyPI. The
    package is removed first, so that the wheel is installed even when one of the same
    version was (ContextForge is not, when it is already there: pip leaves a requirement it
    finds met)."""
    interpreter = python312()
    if not (VENV / "bin" / "python").exists():
        subprocess.run([str(interpreter), "-m", "venv", str(VENV)], check=True, timeout=INSTALL_SECONDS)
    command, count = re.subn(r"(?<=\s)mcp-provenance(?=\s|$)", str(wheel()), block.strip())
    if count != 1:
        raise AssertionError(f"the README's install block names mcp-provenance {count} times, not once: {block!r}")
    subprocess.run(["pip", "uninstall", "--yes", "--quiet", "mcp-provenance"], env=environment(),
                   capture_output=True, check=False, timeout=INSTALL_SECONDS)
    ran = subprocess.run(["sh", "-e", "-c", command], env=environment(), capture_output=True, text=True,
                         check=False, timeout=INSTALL_SECONDS)
    if ran.returncode != 0:
        raise AssertionError(f"{command} failed ({ran.returncode}):\n{ran.stdout}{ran.stderr}")
