"""auditwheel's verdict on each wheel `make python-wheel` builds, printed as auditwheel gives it,
and held to the platform tags the wheel's name claims: it exits non-zero, naming the wheel, when
auditwheel finds that a wheel's libraries or symbol versions allow less than its name says.

Usage: python tools/audit-wheels.py WHEEL... (the Python of the venv auditwheel is in: the
Makefile runs it as target/python/build/bin/python)

One allowance, for musllinux. zig links a musl extension against musl's libc by the name its
stubs give it, `libc.so`, where Alpine's toolchain (the musllinux images') writes
`libc.musl-x86_64.so.1`. auditwheel (6.8) knows musl's libc by the second name only, so it calls
`libc.so` an outside library and the wheel `linux_x86_64`. musl's loader resolves any `libc.*` to
itself (the reserved names of its ldso/dynlink.c), never to a file, so a musllinux wheel passes
when auditwheel's verdict on its symbols is its tag and `libc.so` is the only library it needs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Set

AUDITWHEEL = Path(sys.executable).with_name("auditwheel")
#: musl's libc by the name zig's musl stubs give it (above).
MUSL_LIBC = {"libc.so"}


def claimed(wheel: Path) -> Set[str]:
    """The platform tags in a wheel's name (`name-version-python-abi-platform.whl`, several
    tags joined by dots: `manylinux2014_x86_64.manylinux_2_17_x86_64`)."""
    return set(wheel.name.removesuffix(".whl").split("-")[-1].split("."))


def show(wheel: Path, musl: bool) -> Dict[str, Any]:
    """`auditwheel show`, printed, then its verdict as JSON. A musl wheel's libraries are looked
    for nowhere: this glibc machine has none of them, and auditwheel would read Debian's
    `/usr/lib/x86_64-linux-gnu/libc.so`, a linker script, as musl's `libc.so` and fail."""
    with tempfile.TemporaryDirectory() as nowhere:
        where = ["--ldpaths", nowhere] if musl else []
        subprocess.run([str(AUDITWHEEL), "show", *where, str(wheel)], check=True)
        out = subprocess.run([str(AUDITWHEEL), "show", "--json", *where, str(wheel)], check=True,
                             capture_output=True, text=True).stdout
    verdict: Dict[str, Any] = json.loads(out)
    return verdict


def audit(wheel: Path) -> Optional[str]:
    """What is wrong with the wheel, or None."""
    tags = claimed(wheel)
    musl = any(tag.startswith("musllinux_") for tag in tags)
    try:
        verdict = show(wheel, musl)
    except subprocess.CalledProcessError as error:
        return f"{wheel.name}: auditwheel could not read it (it exited with {error.returncode})"
    if verdict["overall_tag"] in tags:
        return None
    if musl and verdict["sym_tag"] in tags and set(verdict["external_libs"]) <= MUSL_LIBC:
        print(f"{wheel.name}: {verdict['sym_tag']} by its symbols; its one library is musl's libc "
              f"by the name zig gives it ({', '.join(sorted(verdict['external_libs']))}), which musl's loader resolves to itself")
        return None
    return (f"{wheel.name}: auditwheel finds it {verdict['overall_tag']} (by its symbols {verdict['sym_tag']}, "
            f"libraries it needs from outside: {sorted(verdict['external_libs']) or 'none'}), "
            f"not {' or '.join(sorted(tags))} as its name says")


def main(wheels: List[str]) -> int:
    if not wheels:
        print("usage: python tools/audit-wheels.py WHEEL...", file=sys.stderr)
        return 2
    wrong = [problem for problem in (audit(Path(wheel)) for wheel in wheels) if problem]
    for problem in wrong:
        print(problem, file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
