"""The wheels `make python-wheel` builds load where their names say, read as a loader reads them
(binutils' readelf: the libraries an extension needs and the symbol versions it asks them for).
The manylinux2014 wheel's extension asks glibc for no version above 2.17, so it loads on CentOS 7,
Debian 11, Ubuntu 20.04 and Amazon Linux 2; the musllinux_1_2 wheel's needs no glibc at all, only
musl's libc, and musl's own loader (Debian's musl 1.2) finds every symbol it needs there but
Python's; and the extension these tests import is the manylinux2014 wheel's, byte for byte.
(auditwheel's own verdict on both is the build's: tools/audit-wheels.py.)"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import unittest
import zipfile
from pathlib import Path
from typing import Dict, List, Set, Tuple

import mcp_provenance._native

ROOT = Path(__file__).resolve().parents[2]
#: The manylinux2014 wheel, the one the tests' venv installs; the musllinux one below it.
WHEELS = ROOT / "target" / "wheels"
MUSLLINUX = WHEELS / "musllinux"
#: manylinux2014 is glibc 2.17 (PEP 599).
MANYLINUX2014_GLIBC = (2, 17)
#: The glibc of x86_64, by the names of its libraries: none may be needed by a musl extension.
GLIBC_LIBRARIES = re.compile(r"^(libc\.so\.6|ld-linux-x86-64\.so\.2|libpthread\.so\.0|libdl\.so\.2|libm\.so\.6|librt\.so\.1)$")
#: musl's libc, by the name zig's musl stubs give it (Alpine's toolchain writes the second):
#: musl's loader resolves any `libc.*` name to itself.
MUSL_LIBC = {"libc.so", "libc.musl-x86_64.so.1"}
#: A line of readelf's version needs: `000000: Version: 1  File: libc.so.6  Cnt: 4`, then
#: `0x0040:   Name: GLIBC_2.2.5  Flags: none  Version: 3` for each version of that file.
NEED_FILE = re.compile(r"^\s*\S+: Version: \d+\s+File: (\S+)")
NEED_NAME = re.compile(r"^\s*\S+:\s+Name: (\S+)")
NEEDED = re.compile(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]")
#: musl's loader, from Debian's package musl (`make python-wheel` installs it).
MUSL_LOADER = Path("/lib/ld-musl-x86_64.so.1")
#: What musl's loader says of a symbol no library it loaded defines.
UNDEFINED = re.compile(r"^Error relocating [^:]+: (\S+): symbol not found$", re.M)


def wheel(folder: Path) -> Path:
    """The one wheel of the package in ``folder``."""
    found = sorted(folder.glob("mcp_provenance-*.whl"))
    if len(found) != 1:
        raise AssertionError(f"{folder} holds {len(found)} wheels of mcp-provenance, not one: `make python-wheel` builds it")
    return found[0]


def extension(wheel: Path) -> bytes:
    """The wheel's one extension module, ``mcp_provenance/_native.abi3.so``."""
    with zipfile.ZipFile(wheel) as archive:
        [name] = [name for name in archive.namelist() if name.endswith(".so")]
        assert name == "mcp_provenance/_native.abi3.so", name
        return archive.read(name)


def readelf(library: bytes, *options: str) -> str:
    tool = shutil.which("readelf")
    if tool is None:
        raise AssertionError("readelf (Debian's binutils, which Rust links with) is not installed")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "_native.abi3.so"
        path.write_bytes(library)
        return subprocess.run([tool, "--wide", *options, str(path)], check=True, capture_output=True, text=True).stdout


def needs(library: bytes) -> Tuple[List[str], Dict[str, Set[str]]]:
    """The libraries an extension needs, and the symbol versions it asks each for."""
    libraries = NEEDED.findall(readelf(library, "--dynamic"))
    versions: Dict[str, Set[str]] = {}
    current = None
    for line in readelf(library, "--version-info").splitlines():
        if (file := NEED_FILE.match(line)) is not None:
            current = file.group(1)
            versions.setdefault(current, set())
        elif (name := NEED_NAME.match(line)) is not None and current is not None:
            versions[current].add(name.group(1))
    return libraries, versions


def glibc(version: str) -> Tuple[int, ...]:
    """``GLIBC_2.3.4`` as ``(2, 3, 4)``."""
    return tuple(int(part) for part in version.removeprefix("GLIBC_").split("."))


class Manylinux2014(unittest.TestCase):
    def setUp(self) -> None:
        self.wheel = wheel(WHEELS)
        self.library = extension(self.wheel)

    def test_its_name_claims_manylinux2014_for_x86_64(self) -> None:
        self.assertTrue(self.wheel.name.endswith("-cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"), self.wheel.name)

    def test_it_asks_glibc_for_no_version_above_2_17(self) -> None:
        libraries, versions = needs(self.library)
        self.assertIn("libc.so.6", libraries)
        asked = {version for names in versions.values() for version in names if version.startswith("GLIBC_")}
        self.assertIn("GLIBC_2.2.5", asked)  # the reading works: x86_64's first glibc version is asked for
        newest = max(asked, key=glibc)
        self.assertLessEqual(glibc(newest)[:2], MANYLINUX2014_GLIBC, f"{self.wheel.name} asks for {newest}")

    def test_the_tests_import_its_extension(self) -> None:
        self.assertEqual(Path(mcp_provenance._native.__file__).read_bytes(), self.library,
                         "the extension imported here is not the manylinux2014 wheel's: `make python-wheel` installs it")


class Musllinux(unittest.TestCase):
    def setUp(self) -> None:
        self.wheel = wheel(MUSLLINUX)
        self.library = extension(self.wheel)

    def test_its_name_claims_musllinux_1_2_for_x86_64(self) -> None:
        self.assertTrue(self.wheel.name.endswith("-cp310-abi3-musllinux_1_2_x86_64.whl"), self.wheel.name)

    def test_it_is_an_x86_64_library_that_needs_musls_libc_and_no_glibc(self) -> None:
        header = readelf(self.library, "--file-header")
        self.assertRegex(header, r"Machine:\s+Advanced Micro Devices X86-64")
        self.assertRegex(header, r"Type:\s+DYN")
        libraries, versions = needs(self.library)
        self.assertEqual([library for library in libraries if GLIBC_LIBRARIES.match(library)], [])
        self.assertLessEqual(set(libraries), MUSL_LIBC)
        self.assertTrue(set(libraries) & MUSL_LIBC, libraries)
        # musl has no symbol versions: any version asked for would be glibc's (or libgcc's).
        self.assertEqual(versions, {})

    def test_musls_loader_resolves_its_libc_to_itself_and_finds_all_but_pythons_symbols(self) -> None:
        if not MUSL_LOADER.is_file():
            raise AssertionError(f"{MUSL_LOADER} (Debian's musl) is not installed: `make python-wheel` installs it")
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "_native.abi3.so"
            path.write_bytes(self.library)
            # ldd's mode: what each library needed resolves to, and each symbol that none defines
            # (the interpreter's, here: the loader runs the library alone, so it exits non-zero).
            listed = subprocess.run([str(MUSL_LOADER), "--list", str(path)], capture_output=True, text=True)
        self.assertRegex(listed.stdout, rf"libc\.so => {re.escape(str(MUSL_LOADER))} ")
        undefined = UNDEFINED.findall(listed.stderr)
        self.assertIn("PyModuleDef_Init", undefined)  # the reading works: the module's entry needs it
        self.assertEqual([name for name in undefined if not name.startswith(("Py", "_Py"))], [], listed.stderr)
        self.assertEqual(len(undefined), len(listed.stderr.splitlines()), listed.stderr)


if __name__ == "__main__":
    unittest.main()
