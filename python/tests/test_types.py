"""The package's types hold: `mypy --strict` accepts the package and a
usage file that calls every function, and refuses a call that breaks them
(so that the first check cannot pass for want of types)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

USAGE = Path(__file__).with_name("usage.py")
MISUSE = '''
from mcp_provenance import audit_record, stamp_initiator
from mcp_provenance.types import FilterOptions
stamp_initiator({"method": "tools/call"}, "robot")
tool: int = audit_record({"method": "ping"})["tool"]
audit_record({"method": "ping"}, {"policy": {"userIntent": "hide"}})
hashed: FilterOptions = {"auditArguments": "hash"}
'''


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", *args],
                          capture_output=True, text=True, check=False)


class Types(unittest.TestCase):
    def test_strict_mypy_accepts_the_package_and_every_call_of_the_usage_file(self) -> None:
        for args in (["-p", "mcp_provenance"], [str(USAGE)]):
            checked = mypy(*args)
            self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)

    def test_strict_mypy_refuses_what_the_types_forbid(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            misuse = Path(folder, "misuse.py")
            misuse.write_text(MISUSE, encoding="utf-8")
            checked = mypy(str(misuse))
        self.assertEqual(checked.returncode, 1)
        self.assertIn('Argument 2 to "stamp_initiator" has incompatible type "Literal[\'robot\']"', checked.stdout)
        self.assertIn("Incompatible types in assignment", checked.stdout)
        self.assertIn('"audit_record" has incompatible type "dict[str, dict[str, str]]"; expected "AuditContext | None"', checked.stdout)
        self.assertIn('TypedDict item "auditArguments" has type "Literal[\'keep\', \'digest\', \'drop\']"', checked.stdout)


if __name__ == "__main__":
    unittest.main()
