"""Every example in the package's docstrings runs, and gives what it shows."""

from __future__ import annotations

import doctest
import re
import shlex
import tomllib
import unittest
from pathlib import Path

import mcp_provenance
import mcp_provenance._native
import mcp_provenance._asgi_io
import mcp_provenance._asgi_witnessed
import mcp_provenance.asgi
import mcp_provenance.errors
import mcp_provenance.fastmcp
import mcp_provenance.mcp
import mcp_provenance.metrics
import mcp_provenance.otel
import mcp_provenance.prometheus
import mcp_provenance.sessions
import mcp_provenance.sinks
import mcp_provenance.types

ROOT = Path(__file__).resolve().parents[2]
READMES = [ROOT / "README.md", ROOT / "python" / "README.md"]
PYTHON_README = ROOT / "python" / "README.md"
PYPROJECT = ROOT / "python" / "pyproject.toml"
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
#: Every fenced block: its language, its text.
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)

MODULES = [mcp_provenance.metrics, mcp_provenance.prometheus, mcp_provenance.sinks,
           mcp_provenance, mcp_provenance._native, mcp_provenance.asgi, mcp_provenance._asgi_io,
           mcp_provenance._asgi_witnessed, mcp_provenance.errors,
           mcp_provenance.fastmcp, mcp_provenance.mcp, mcp_provenance.otel, mcp_provenance.sessions,
           mcp_provenance.types]


class Docs(unittest.TestCase):
    def test_every_example_runs(self) -> None:
        for module in MODULES:
            failed, attempted = doctest.testmod(module, verbose=False, optionflags=doctest.NORMALIZE_WHITESPACE)
            self.assertEqual(failed, 0, module.__name__)
            self.assertGreater(attempted, 0, f"{module.__name__} shows no example")

    def test_every_native_function_is_documented_with_an_example(self) -> None:
        for name in mcp_provenance.__all__:
            item = getattr(mcp_provenance, name)
            if callable(item) and not isinstance(item, type):
                self.assertIn(">>> ", item.__doc__ or "", name)

    def test_every_python_block_of_the_readmes_runs(self) -> None:
        for readme in READMES:
            blocks = PYTHON_BLOCK.findall(readme.read_text(encoding="utf-8"))
            self.assertGreaterEqual(len(blocks), 2, readme)
            for number, block in enumerate(blocks):
                name = f"{readme.name}, python block {number + 1}"
                if ">>> " not in block:
                    exec(compile(block, name, "exec"), {})
                    continue
                test = doctest.DocTestParser().get_doctest(block, {}, name, str(readme), 0)
                runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.NORMALIZE_WHITESPACE)
                runner.run(test)
                self.assertEqual(runner.failures, 0, name)

    def test_every_block_of_the_python_readme_is_run_or_checked(self) -> None:
        # Python is run (above); a shell block may only install the package, with extras it has.
        extras = set(tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["optional-dependencies"])
        blocks = BLOCK.findall(PYTHON_README.read_text(encoding="utf-8"))
        self.assertEqual({language for language, _ in blocks}, {"python", "sh"})
        installed = set()
        for language, block in blocks:
            for line in block.splitlines() if language == "sh" else []:
                command = shlex.split(line, comments=True)
                self.assertEqual(command[:2], ["pip", "install"], line)
                [package] = command[2:]
                name, _, named = package.partition("[")
                self.assertEqual(name, "mcp-provenance", line)
                installed |= set(named.rstrip("]").split(",")) - {""}
        self.assertEqual(installed, extras)


if __name__ == "__main__":
    unittest.main()
